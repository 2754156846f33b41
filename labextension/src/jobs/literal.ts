/**
 * Python literals as JSON values, and back: None, True, numbers, strings
 * (prefixes, escapes, triple quotes), lists, tuples and dicts of those.
 */
import { JSONObject, JSONValue } from '@lumino/coreutils';

import { IToken, tokenize } from './pylex';

/** Text that is not a literal this parser reads. */
export class LiteralError extends Error {}

/** Parse one Python literal (None, True, 3, -1.5e3, 'x', [..], (..), {..}). */
export function parsePythonLiteral(text: string): JSONValue {
  let tokens: IToken[];
  try {
    tokens = tokenize(text).filter(t => t.type !== 'newline');
  } catch (error) {
    throw new LiteralError(
      error instanceof Error ? error.message : String(error)
    );
  }
  if (!tokens.length) {
    throw new LiteralError('empty');
  }
  return new LiteralParser(tokens).parseAll();
}

const CONSTANTS: Record<string, JSONValue> = {
  True: true,
  False: false,
  None: null,
  // JSON's spellings too, for people who think in JSON.
  true: true,
  false: false,
  null: null
};

export class LiteralParser {
  constructor(private readonly _tokens: IToken[]) {}

  parseAll(): JSONValue {
    const value = this._value();
    if (this._pos < this._tokens.length) {
      throw new LiteralError(`unexpected '${this._peek()?.text}'`);
    }
    return value;
  }

  private _peek(): IToken | undefined {
    return this._tokens[this._pos];
  }

  private _next(): IToken {
    const token = this._tokens[this._pos++];
    if (!token) {
      throw new LiteralError('unexpected end');
    }
    return token;
  }

  private _value(): JSONValue {
    const token = this._next();
    if (token.type === 'name' && token.text in CONSTANTS) {
      return CONSTANTS[token.text];
    }
    if (token.type === 'number') {
      return parseNumber(token.text);
    }
    if (token.text === '-' || token.text === '+') {
      const number = this._next();
      if (number.type !== 'number') {
        throw new LiteralError('a sign must precede a number');
      }
      const value = parseNumber(number.text);
      return token.text === '-' ? -value : value;
    }
    if (token.type === 'string') {
      // Adjacent literals concatenate, as in Python.
      let text = parseString(token.text);
      while (this._peek()?.type === 'string') {
        text += parseString(this._next().text);
      }
      return text;
    }
    if (token.text === '[') {
      return this._sequence(']').items;
    }
    if (token.text === '(') {
      const { items, comma } = this._sequence(')');
      // `(x)` is x; `(x,)` and `()` are tuples.
      return items.length === 1 && !comma ? items[0] : items;
    }
    if (token.text === '{') {
      return this._dict();
    }
    throw new LiteralError(`'${token.text}' is not a literal`);
  }

  private _sequence(close: string): { items: JSONValue[]; comma: boolean } {
    const items: JSONValue[] = [];
    let comma = false;
    while (this._peek()?.text !== close) {
      items.push(this._value());
      comma = this._peek()?.text === ',';
      if (comma) {
        this._pos += 1;
      } else if (this._peek()?.text !== close) {
        throw new LiteralError(`expected ',' or '${close}'`);
      }
    }
    this._pos += 1;
    return { items, comma };
  }

  private _dict(): JSONObject {
    const result: JSONObject = {};
    while (this._peek()?.text !== '}') {
      const key = this._value();
      if (typeof key !== 'string') {
        throw new LiteralError('dict keys must be strings');
      }
      if (this._next().text !== ':') {
        throw new LiteralError("expected ':'");
      }
      result[key] = this._value();
      if (this._peek()?.text === ',') {
        this._pos += 1;
      } else if (this._peek()?.text !== '}') {
        throw new LiteralError("expected ',' or '}'");
      }
    }
    this._pos += 1;
    return result;
  }

  private _pos = 0;
}

function parseNumber(text: string): number {
  if (/[jJ]$/.test(text)) {
    throw new LiteralError('complex numbers are not supported');
  }
  const plain = text.replace(/_/g, '');
  const prefix = plain.slice(0, 2).toLowerCase();
  const base = { '0x': 16, '0o': 8, '0b': 2 }[prefix];
  const value = base ? parseInt(plain.slice(2), base) : Number(plain);
  const integral = base !== undefined || !/[.eE]/.test(plain);
  if (!Number.isFinite(value) || (integral && !Number.isSafeInteger(value))) {
    throw new LiteralError(`'${text}' is out of range`);
  }
  return value;
}

const ESCAPES: Record<string, string> = {
  '\n': '',
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v'
};

/** The value of a string token (raw and unicode prefixes only). */
function parseString(token: string): string {
  const prefix = /^[a-zA-Z]*/.exec(token)?.[0].toLowerCase() ?? '';
  if (prefix.includes('b') || prefix.includes('f')) {
    throw new LiteralError('bytes and f-strings are not plain values');
  }
  const body = token.slice(prefix.length);
  const quote = body.startsWith(body[0].repeat(3)) ? 3 : 1;
  const inner = body.slice(quote, body.length - quote);
  if (prefix.includes('r')) {
    return inner;
  }
  return inner.replace(
    /\\(x[\da-fA-F]{2}|u[\da-fA-F]{4}|U[\da-fA-F]{8}|[0-7]{1,3}|[\s\S])/g,
    (whole, esc: string) => {
      if (/^[xuU]/.test(esc) && esc.length > 1) {
        return String.fromCodePoint(parseInt(esc.slice(1), 16));
      }
      if (/^[0-7]+$/.test(esc)) {
        return String.fromCodePoint(parseInt(esc, 8));
      }
      return ESCAPES[esc] ?? whole;
    }
  );
}

/** A JSON value written as Python: `None`, `True`, `'text'`, `[1, 2]`. */
export function toPython(value: JSONValue): string {
  if (value === null) {
    return 'None';
  }
  if (typeof value === 'boolean') {
    return value ? 'True' : 'False';
  }
  if (typeof value === 'number') {
    return String(value);
  }
  if (typeof value === 'string') {
    return pyRepr(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map(toPython).join(', ')}]`;
  }
  const entries = Object.entries(value).map(
    ([k, v]) => `${pyRepr(k)}: ${toPython(v as JSONValue)}`
  );
  return `{${entries.join(', ')}}`;
}

/** Python's repr of a str: single quotes unless the text holds one. */
function pyRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text
    .replace(/\\/g, '\\\\')
    .replace(/\n/g, '\\n')
    .replace(/\r/g, '\\r')
    .replace(/\t/g, '\\t')
    .split(quote)
    .join(`\\${quote}`);
  return `${quote}${escaped}${quote}`;
}
