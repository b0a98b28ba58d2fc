/**
 * Terraform type constraints (`string`, `list(string)`, `map(object({ a = string, b = optional(number, 1) }))`)
 * parsed from the one-line form module-variables.ts's parser gives a variable's `type`, for the typed cdktn props.
 */
export type HclType =
  | { readonly kind: 'string' | 'number' | 'bool' | 'any' }
  | { readonly kind: 'list' | 'set' | 'map'; readonly element: HclType }
  | { readonly kind: 'object'; readonly attributes: ReadonlyArray<HclAttribute> };

export interface HclAttribute {
  readonly name: string;
  readonly type: HclType;
  /** Wrapped in `optional(...)`: the caller may leave it out. */
  readonly optional: boolean;
  /** The `optional(type, default)` default, as HCL text. */
  readonly default?: string;
}

class TypeParser {
  private pos = 0;

  constructor(private readonly text: string) {}

  public parseAll(): HclType {
    const type = this.type();
    this.skipSpace();
    if (this.pos !== this.text.length) this.fail('end of type');
    return type;
  }

  private type(): HclType {
    const word = this.word();
    switch (word) {
      case 'string':
      case 'number':
      case 'bool':
      case 'any':
        return { kind: word };
      case 'list':
      case 'set':
      case 'map': {
        this.expect('(');
        const element = this.type();
        this.expect(')');
        return { kind: word, element };
      }
      case 'object': {
        this.expect('(');
        this.expect('{');
        const attributes: HclAttribute[] = [];
        while (!this.peek('}')) {
          const name = this.word();
          this.expect('=');
          attributes.push({ name, ...this.attributeType() });
          if (this.peek(',')) this.expect(',');
        }
        this.expect('}');
        this.expect(')');
        return { kind: 'object', attributes };
      }
      default:
        return this.fail(`a type, found "${word}"`);
    }
  }

  private attributeType(): { type: HclType; optional: boolean; default?: string } {
    const start = this.pos;
    if (this.word() !== 'optional') {
      this.pos = start;
      return { type: this.type(), optional: false };
    }
    this.expect('(');
    const type = this.type();
    let fallback: string | undefined;
    if (this.peek(',')) {
      this.expect(',');
      fallback = this.defaultText();
    }
    this.expect(')');
    return { type, optional: true, default: fallback };
  }

  /** The text of an `optional` default, up to its closing parenthesis (brackets and strings balanced). */
  private defaultText(): string {
    this.skipSpace();
    const start = this.pos;
    let depth = 0;
    let inString = false;
    for (; this.pos < this.text.length; this.pos++) {
      const c = this.text[this.pos];
      if (inString) {
        if (c === '\\') this.pos++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if ('([{'.includes(c)) depth++;
      else if (')]}'.includes(c)) {
        if (depth === 0) break;
        depth--;
      }
    }
    return this.text.slice(start, this.pos).trim();
  }

  private word(): string {
    this.skipSpace();
    const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(this.text.slice(this.pos));
    if (!m) return this.fail('a name');
    this.pos += m[0].length;
    return m[0];
  }

  private peek(c: string): boolean {
    this.skipSpace();
    return this.text[this.pos] === c;
  }

  private expect(c: string): void {
    if (!this.peek(c)) this.fail(`"${c}"`);
    this.pos++;
  }

  private skipSpace(): void {
    while (/\s/.test(this.text[this.pos] ?? '')) this.pos++;
  }

  private fail(what: string): never {
    throw new Error(`type constraint ${this.text}: expected ${what} at offset ${this.pos}`);
  }
}

export function parseHclType(text: string): HclType {
  return new TypeParser(text).parseAll();
}

/** The object type a variable holds itself, or as the element of a list, set or map. */
export function objectOf(type: HclType): Extract<HclType, { kind: 'object' }> | undefined {
  if (type.kind === 'object') return type;
  if ((type.kind === 'list' || type.kind === 'set' || type.kind === 'map') && type.element.kind === 'object') return type.element;
  return undefined;
}
