import { GENERATOR } from './hcl';

/**
 * A generated region of a module file, between `# BEGIN generated <id>` and `# END generated <id>`. For each
 * model rule (validations.ts): a `validation` block inside the variable, or a `precondition` for a rule that
 * spans variables (in main.tf, or the file ModuleSpec.preconditions names). Conditions are rendered from the
 * row's data (kind, bounds, values, pattern); messages from its template with the module's variable names,
 * each value an interpolation.
 */
export interface Region {
  readonly module: string;
  /** File of the module holding the region: variables.tf, or the file of the object a precondition is on. */
  readonly file: string;
  readonly id: string;
  /** What to edit instead of the region. */
  readonly source: string;
  /** The rendered lines (without the markers), indented for their place. */
  readonly lines: string[];
}

/** The BEGIN marker of a region: its id, who writes it, and what to edit instead. */
export function beginMarker(region: Region): string {
  return `# BEGIN generated ${region.id} by ${GENERATOR} from ${region.source}; edit there (make terraform-generate)`;
}

const regionPattern = (id: string) => new RegExp(`^([ \\t]*)# BEGIN generated ${id}(?: .*)?\\n[\\s\\S]*?^[ \\t]*# END generated ${id}\\n?`, 'gm');

/** Replaces the body of each `# BEGIN generated <id>` / `# END generated <id>` region of a file. */
export function fillRegions(text: string, regions: ReadonlyArray<Region>, file: string): string {
  let out = text;
  for (const region of regions) {
    const match = new RegExp(regionPattern(region.id).source, 'm').exec(out);
    if (!match) throw new Error(`${file}: no region "# BEGIN generated ${region.id}"`);
    const indent = match[1];
    const body = [`${indent}${beginMarker(region)}`, ...region.lines.map((l) => l.replace(/\s+$/, '')), `${indent}# END generated ${region.id}`].join('\n');
    out = out.slice(0, match.index) + body + (match[0].endsWith('\n') ? '\n' : '') + out.slice(match.index + match[0].length);
  }
  for (const m of out.matchAll(/# BEGIN generated (\S+)/g)) {
    if (!regions.some((r) => r.id === m[1])) throw new Error(`${file}: region ${m[1]} has no generator`);
  }
  return out;
}

/** The hand-written part of a file: every generated region cut out, each leaving a `# region <id>` line at its place. */
export function handWritten(text: string): string {
  return text.replace(regionPattern('(\\S+)'), (_m, indent: string, id: string) => `${indent}# region ${id}\n`);
}
