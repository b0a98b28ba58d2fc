/** Report writers: latest.json (everything), latest.md (a readable table beside the seeds), latest.svg (a chart). */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderComparison } from './comparison';
import { round, type Spread } from './stats';
import { SCENARIO_NAMES, type BenchResult, type ScenarioResult, type TargetCheck } from './types';

export function renderJson(result: BenchResult): string {
  return `${JSON.stringify(result, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 2)}\n`;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const fmt = (n: number): string => (Number.isFinite(n) ? String(round(n, Math.abs(n) >= 100 ? 1 : 3)) : String(n));

function figure(c: TargetCheck, which: 'baseline' | 'ours'): string {
  return `${which === 'baseline' ? c.baselineLabel : c.oursLabel}: ${fmt(c[which])} ${c.unit}`;
}

/** A median with its range over the runs, e.g. "0.12 (0.11–0.14)"; the bare figure when there was one run. */
function withRange(median: number, s: Spread | undefined): string {
  if (s === undefined || s.values.length < 2) return fmt(median);
  // An en dash, so a range of negative figures does not read as a subtraction.
  return `${fmt(median)} (${fmt(s.min)}–${fmt(s.max)})`;
}

/** The result cell: met only when the median and every run meet the target, and says which failed. */
export function verdict(c: TargetCheck): string {
  if (c.runs === undefined) return c.met ? 'met' : '**missed**';
  const counted = `met in ${c.runs.met} of ${c.runs.planned} run${c.runs.planned === 1 ? '' : 's'}`;
  if (c.met) return counted;
  return c.runs.medianMeets ? `**missed**: median meets, spread does not (${counted})` : `**missed** (${counted})`;
}

/** One line on the machine's load over a scenario's runs. */
function loadLine(s: ScenarioResult): string | undefined {
  const l = s.load;
  if (l === undefined) return undefined;
  const range = (x: Spread): string => withRange(x.median, x);
  const outside = l.outsideCores !== undefined ? `; cores kept busy by work outside the bench ${range(l.outsideCores)}` : '';
  return `- **${s.name}** (${s.runs?.length ?? 1} run${(s.runs?.length ?? 1) === 1 ? '' : 's'}): load average (1 min) before ${range(l.loadAverage1Before)}, after ${range(l.loadAverage1After)}${outside}`;
}

export function renderMarkdown(result: BenchResult): string {
  const e = result.environment;
  const lines: string[] = [
    `# aurora-proxy-kit bench (${result.mode})`,
    '',
    `${result.startedAt}, ${result.durationSeconds} s on ${e.host.cores} cores (${e.host.cpuModel}), ${e.host.memoryGiB} GiB, Linux ${e.host.kernel}, Node ${e.host.node}; rehearsal: ${e.host.rehearsal}.`,
    `Versions: ${Object.entries(e.versions).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    '',
    `Each scenario ran ${result.repeat} time${result.repeat === 1 ? '' : 's'}; each figure is the median of its runs, the ratio with its range in parentheses, and a target is met only when the median and every run meet it.`,
    '',
    `**${result.summary.met} of ${result.summary.targets} targets met.**${result.summary.missed.length > 0 ? ` Missed: ${result.summary.missed.join(', ')}.` : ''}${result.summary.failedScenarios.length > 0 ? ` Failed scenarios: ${result.summary.failedScenarios.join(', ')}.` : ''}`,
    '',
    '| scenario | metric | seed figure | baseline (ours) | ours | ratio ours/baseline (range) | reads as | target | result |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const name of SCENARIO_NAMES) {
    const s = result.scenarios[name];
    if (s === undefined) continue;
    if (s.error !== undefined) lines.push(`| ${name} | (scenario failed) | | | | | | | FAILED: ${cell(s.error)} |`);
    for (const c of s.checks) {
      lines.push(`| ${name} | ${cell(c.metric)} | ${cell(c.seed)} | ${cell(figure(c, 'baseline'))} | ${cell(figure(c, 'ours'))} | ${withRange(c.ratio, c.runs?.ratio)} | ${cell(c.reads)} | ${cell(c.target)} | ${verdict(c)} |`);
    }
  }
  const compared = SCENARIO_NAMES.flatMap((n) => { const s = result.scenarios[n]; return s?.comparison === undefined || s.error !== undefined ? [] : [s]; });
  for (const s of compared) {
    lines.push('', `## Side by side: ${s.title}`, '', 'The same loads through each path; each figure is the median of the runs, its range in parentheses; – where the load does not apply.', '', ...renderComparison(s.comparison!));
  }
  lines.push('', '## Other ratios (ours / baseline)', '');
  for (const name of SCENARIO_NAMES) {
    const s = result.scenarios[name];
    if (s === undefined || s.error !== undefined) continue;
    lines.push(`- **${name}**: ${Object.entries(s.ratios).map(([k, v]) => `${k} ${withRange(v, s.ratioSpreads?.[k])}`).join(', ')}`);
  }
  const loads = SCENARIO_NAMES.flatMap((n) => { const s = result.scenarios[n]; const l = s === undefined ? undefined : loadLine(s); return l === undefined ? [] : [l]; });
  if (loads.length > 0) lines.push('', '## Machine load during the runs', '', ...loads);
  lines.push('', '## How the loads were scaled', '');
  for (const name of SCENARIO_NAMES) if (result.scenarios[name] !== undefined) lines.push(`- **${name}**: ${e.scaling[name]}`);
  lines.push('', '## Notes', '');
  for (const name of SCENARIO_NAMES) {
    const s = result.scenarios[name];
    if (s === undefined) continue;
    lines.push(`- **${name}** (${s.durationSeconds} s; seed: ${s.seedSource}): ${s.notes.join(' ')}`);
  }
  lines.push('', 'All figures, per side and per run, with the settings of each rehearsal and the load around each run: latest.json.', '');
  return lines.join('\n');
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The advantage factor a check is judged by (how many times better ours is), and the target factor. */
export function advantage(c: TargetCheck): { value: number; target: number } | undefined {
  const m = /^>= ([\d.]+)x/.exec(c.target);
  if (m === null) return undefined;
  const target = Number(m[1]);
  const better = / (fewer|less|faster)$/.test(c.target) ? (c.ratio === 0 ? Number.POSITIVE_INFINITY : 1 / c.ratio) : c.ratio;
  return { value: better, target };
}

/** Font size of the chart's text, and a generous average glyph width for sans-serif (in em) to size columns by. */
export const CHART_FONT_SIZE = 12;
export const CHART_CHAR_WIDTH_EM = 0.6;

/** Approximate rendered width of `text` at `fontSize` (SVG has no text metrics without a renderer). */
export function approxTextWidth(text: string, fontSize = CHART_FONT_SIZE): number {
  return Math.ceil([...text].length * fontSize * CHART_CHAR_WIDTH_EM);
}

/** Horizontal bars on a log scale: each target's measured advantage, its target marked. */
export function renderSvg(result: BenchResult): string {
  const rows = SCENARIO_NAMES.flatMap((n) => (result.scenarios[n]?.checks ?? []).map((c) => ({ c, a: advantage(c) })))
    .filter((r): r is { c: TargetCheck; a: { value: number; target: number } } => r.a !== undefined)
    .map((r) => ({ ...r, label: `${r.c.id}: ${r.c.metric}`, value: `${Number.isFinite(r.a.value) ? round(r.a.value, 2) : '∞'}x (target ${r.a.target}x)` }));
  const margin = 12;
  const gap = 8;
  const title = `aurora-proxy-kit bench (${result.mode}): advantage of the pooled path, log scale`;
  const subtitle = `${result.summary.met}/${result.summary.targets} targets met; bar = median factor of ${result.repeat} run${result.repeat === 1 ? '' : 's'}, black tick = target; green met (median and every run), red missed. ${result.startedAt}`;
  const footnote = 'Absolute targets (0 errors, <= 0.1 ms added, >= 25% share) are in latest.md.';
  // The label column is as wide as the longest label, so no label is cut off at the left edge.
  const left = margin + Math.max(0, ...rows.map((r) => approxTextWidth(r.label))) + gap;
  const barArea = 450;
  const valueWidth = Math.max(0, ...rows.map((r) => approxTextWidth(r.value)));
  const width = Math.max(left + barArea + 6 + valueWidth + margin, margin * 2 + approxTextWidth(title, 15), margin * 2 + approxTextWidth(subtitle), margin * 2 + approxTextWidth(footnote));
  const rowH = 34;
  const top = 56;
  const height = top + rows.length * rowH + 50;
  const maxFactor = 32;
  const x = (f: number): number => left + (Math.log2(Math.min(Math.max(f, 1 / 4), maxFactor)) + 2) / (Math.log2(maxFactor) + 2) * barArea;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="${CHART_FONT_SIZE}">`,
    `<rect width="${width}" height="${height}" fill="#fff"/>`,
    `<text x="${margin}" y="22" font-size="15" font-weight="bold">${esc(title)}</text>`,
    `<text x="${margin}" y="40" fill="#555">${esc(subtitle)}</text>`,
  ];
  for (const f of [0.25, 0.5, 1, 2, 4, 8, 16, 32]) {
    parts.push(`<line x1="${x(f).toFixed(1)}" y1="${top - 4}" x2="${x(f).toFixed(1)}" y2="${top + rows.length * rowH}" stroke="${f === 1 ? '#888' : '#e4e4e4'}"/>`);
    parts.push(`<text x="${x(f).toFixed(1)}" y="${top + rows.length * rowH + 16}" text-anchor="middle" fill="#555">${f}x</text>`);
  }
  rows.forEach(({ c, a, label, value }, i) => {
    const y = top + i * rowH;
    const x1 = x(1);
    const xv = x(a.value);
    parts.push(`<text x="${left - gap}" y="${y + 20}" text-anchor="end">${esc(label)}</text>`);
    parts.push(`<rect x="${Math.min(x1, xv).toFixed(1)}" y="${y + 8}" width="${Math.max(1, Math.abs(xv - x1)).toFixed(1)}" height="16" fill="${c.met ? '#2e8b57' : '#c0392b'}"/>`);
    parts.push(`<line x1="${x(a.target).toFixed(1)}" y1="${y + 4}" x2="${x(a.target).toFixed(1)}" y2="${y + 28}" stroke="#000" stroke-width="2"/>`);
    parts.push(`<text x="${(Math.max(x1, xv) + 6).toFixed(1)}" y="${y + 20}">${esc(value)}</text>`);
  });
  parts.push(`<text x="${margin}" y="${height - 10}" fill="#555">${esc(footnote)}</text>`, '</svg>', '');
  return parts.join('\n');
}

export function writeReports(result: BenchResult, outDir: string): string[] {
  const files: Array<[string, string]> = [
    [join(outDir, 'latest.json'), renderJson(result)],
    [join(outDir, 'latest.md'), renderMarkdown(result)],
    [join(outDir, 'latest.svg'), renderSvg(result)],
  ];
  for (const [file, text] of files) writeFileSync(file, text);
  return files.map(([f]) => f);
}
