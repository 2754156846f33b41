/**
 * The `parameters` cell as a form: simple `name = literal` assignments
 * (numbers, strings, booleans, None, lists, tuples and dicts of those) become
 * typed parameters; every other logical line is kept, read-only, as written.
 */
import { JSONValue } from '@lumino/coreutils';

import { LiteralError, LiteralParser } from './literal';
import { IToken, LexError, logicalLines, tokenize } from './pylex';

/** How a parameter is edited: typed inputs, or a Python literal as text. */
export type ParamKind = 'int' | 'float' | 'str' | 'bool' | 'literal';

export interface IParameter {
  name: string;
  kind: ParamKind;
  /** The default, as JSON (None is null, tuples are lists). */
  value: JSONValue;
  /** The literal as written in the cell, e.g. `1e-3` or `'adam'`. */
  source: string;
  /** The type annotation, if any (`int` in `epochs: int = 3`). */
  annotation: string | null;
}

export interface IParametersCell {
  parameters: IParameter[];
  /** Logical lines that are not simple assignments, as written. */
  other: string[];
}

/** Names papermill can inject (and the server accepts). */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Read a `parameters` cell's source. */
export function parseParametersCell(source: string): IParametersCell {
  let lines: IToken[][];
  try {
    lines = logicalLines(tokenize(source));
  } catch (error) {
    if (!(error instanceof LexError)) {
      throw error;
    }
    const other = source
      .split('\n')
      .map(line => line.trimEnd())
      .filter(line => line.trim() && !line.trim().startsWith('#'));
    return { parameters: [], other };
  }
  const byName = new Map<string, IParameter>();
  const other: string[] = [];
  for (const line of lines) {
    const text = source.slice(line[0].start, line[line.length - 1].end);
    const parameter = assignment(line, source);
    if (parameter) {
      const earlier = byName.get(parameter.name);
      if (earlier) {
        // The later assignment wins, as when the cell runs.
        other.push(`${earlier.name} = ${earlier.source}`);
        byName.delete(parameter.name);
      }
      byName.set(parameter.name, parameter);
    } else {
      other.push(text);
    }
  }
  return { parameters: [...byName.values()], other };
}

/** `name [: annotation] = literal`, or null for anything else. */
function assignment(line: IToken[], source: string): IParameter | null {
  const [first, second] = line;
  if (!first || first.type !== 'name' || !IDENTIFIER.test(first.text)) {
    return null;
  }
  let equals = 1;
  let annotation: string | null = null;
  if (second?.text === ':') {
    equals = line.findIndex((t, i) => i > 1 && t.text === '=');
    if (equals < 3) {
      return null;
    }
    annotation = source.slice(line[2].start, line[equals - 1].end);
  }
  if (line[equals]?.text !== '=' || equals + 1 >= line.length) {
    return null;
  }
  const rest = line.slice(equals + 1);
  try {
    const value = new LiteralParser(rest).parseAll();
    const text = source.slice(rest[0].start, rest[rest.length - 1].end);
    return {
      name: first.text,
      kind: kindOf(value, rest),
      value,
      source: text,
      annotation
    };
  } catch (error) {
    if (error instanceof LiteralError) {
      return null;
    }
    throw error;
  }
}

function kindOf(value: JSONValue, tokens: IToken[]): ParamKind {
  if (typeof value === 'boolean') {
    return 'bool';
  }
  if (typeof value === 'string') {
    // Several lines do not fit a one-line input: edit the literal instead.
    return value.includes('\n') ? 'literal' : 'str';
  }
  if (typeof value === 'number') {
    const text = tokens.map(t => t.text).join('');
    return /^[+-]?0[xob]/i.test(text) || !/[.e]/i.test(text) ? 'int' : 'float';
  }
  return 'literal';
}
