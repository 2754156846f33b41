/**
 * A small tokenizer for the Python a `parameters` cell holds: names,
 * numbers, strings (all quote forms, prefixes, triple quotes), operators,
 * comments, and newlines that end a logical line (none inside brackets or
 * after a backslash continuation).
 */

export type TokenType = 'name' | 'number' | 'string' | 'op' | 'newline';

export interface IToken {
  type: TokenType;
  text: string;
  /** Offset of the token's first character in the source. */
  start: number;
  /** Offset after its last character. */
  end: number;
}

/** A source the tokenizer cannot read (an unterminated string, say). */
export class LexError extends Error {}

const NAME = /[A-Za-z_\u00c0-\uffff][\w\u00c0-\uffff]*/y;
const NUMBER =
  /(?:0[xX][\da-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)[jJ]?/y;
const STRING_START = /(?:[rRuUbBfF]{0,2})(?:'''|"""|'|")/y;
const OPERATORS = ['**', '//', '->', ':=', '==', '!=', '<=', '>='];

/** Tokens of `source`, with a `newline` token closing each logical line. */
export function tokenize(source: string): IToken[] {
  const tokens: IToken[] = [];
  let depth = 0;
  let pos = 0;
  const push = (type: TokenType, start: number, end: number): void => {
    tokens.push({ type, text: source.slice(start, end), start, end });
  };
  while (pos < source.length) {
    const ch = source[pos];
    if (ch === '\n') {
      if (depth === 0) {
        push('newline', pos, pos + 1);
      }
      pos += 1;
    } else if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f') {
      pos += 1;
    } else if (ch === '#') {
      const stop = source.indexOf('\n', pos);
      pos = stop < 0 ? source.length : stop;
    } else if (ch === '\\' && source[pos + 1] === '\n') {
      pos += 2;
    } else if (match(STRING_START, source, pos) !== null) {
      const end = stringEnd(source, pos);
      push('string', pos, end);
      pos = end;
    } else if (/\d/.test(ch) || (ch === '.' && /\d/.test(source[pos + 1]))) {
      const text = match(NUMBER, source, pos) ?? ch;
      push('number', pos, pos + text.length);
      pos += text.length;
    } else if (match(NAME, source, pos) !== null) {
      const text = match(NAME, source, pos) ?? ch;
      push('name', pos, pos + text.length);
      pos += text.length;
    } else {
      const op = OPERATORS.find(o => source.startsWith(o, pos)) ?? ch;
      if ('([{'.includes(op)) {
        depth += 1;
      } else if (')]}'.includes(op)) {
        depth = Math.max(0, depth - 1);
      }
      push('op', pos, pos + op.length);
      pos += op.length;
    }
  }
  if (depth > 0) {
    throw new LexError('unclosed bracket');
  }
  if (tokens.length && tokens[tokens.length - 1].type !== 'newline') {
    push('newline', source.length, source.length);
  }
  return tokens;
}

/** Split tokens into logical lines (without their `newline` tokens). */
export function logicalLines(tokens: IToken[]): IToken[][] {
  const lines: IToken[][] = [];
  let line: IToken[] = [];
  for (const token of tokens) {
    if (token.type === 'newline') {
      if (line.length) {
        lines.push(line);
      }
      line = [];
    } else {
      line.push(token);
    }
  }
  if (line.length) {
    lines.push(line);
  }
  return lines;
}

function match(re: RegExp, source: string, pos: number): string | null {
  re.lastIndex = pos;
  const m = re.exec(source);
  return m && m[0].length > 0 ? m[0] : null;
}

/** The offset after the string literal starting at `pos`. */
function stringEnd(source: string, pos: number): number {
  let i = pos;
  while (/[rRuUbBfF]/.test(source[i])) {
    i += 1;
  }
  const quote = source.startsWith(source[i].repeat(3), i)
    ? source[i].repeat(3)
    : source[i];
  i += quote.length;
  while (i < source.length) {
    if (source[i] === '\\') {
      i += 2;
    } else if (source.startsWith(quote, i)) {
      return i + quote.length;
    } else if (source[i] === '\n' && quote.length === 1) {
      break;
    } else {
      i += 1;
    }
  }
  throw new LexError('unterminated string');
}
