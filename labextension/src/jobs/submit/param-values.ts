/**
 * The pure rules of the submit dialog's parameter fields: which defaults are
 * values, what is sent, how a value is first written and checked.
 */
import type { JSONValue } from '@lumino/coreutils';

import type { INotebookParameter } from '../../api/types';

/** Whether the default is a value (else an expression kept as written). */
export function hasLiteralDefault(parameter: INotebookParameter): boolean {
  return parameter.default !== null || parameter.default_text === 'None';
}

/** Whether `value` is the parameter's default (then it is not sent). */
export function isDefault(
  parameter: INotebookParameter,
  value: JSONValue
): boolean {
  return (
    hasLiteralDefault(parameter) &&
    JSON.stringify(value) === JSON.stringify(parameter.default)
  );
}

/**
 * A number input's first text: the cell's own writing when it is a plain
 * number (`1e-3` stays `1e-3`, `+2` becomes `2`), else the value.
 */
export function numberText(written: string, value: JSONValue): string {
  return /^[-+]?[\d.eE+-]+$/.test(written)
    ? written.replace(/^\+/, '')
    : String(value);
}

/**
 * A text as the sweep field writes it: quoted as JSON when a comma would
 * split it into several values or a leading quote would be read as JSON.
 */
export function quoteForSweep(text: string): string {
  return text.includes(',') || /^\s*"/.test(text) ? JSON.stringify(text) : text;
}

/**
 * What is wrong with `text` as a JSON value, or null; an empty text is
 * fine when the parameter is `optional` (its default kept).
 */
export function jsonProblem(text: string, optional: boolean): string | null {
  if (optional && !text.trim()) {
    return null;
  }
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return `Not JSON: ${error instanceof Error ? error.message : error}`;
  }
}

/** A number as Python and JSON both read it: `3`, `-0.5`, `1e-3`, `.5`. */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * What is wrong with `text` as the value of the number parameter `name`
 * (`int` or `float`), in words, or null: why, and an example of a value it
 * takes, as sweep mode says it.
 */
export function numberProblem(
  kind: 'int' | 'float',
  text: string,
  name: string,
  example: string
): string | null {
  const value = text.trim();
  const like = kind === 'int' ? 'a whole number' : 'a number';
  if (!value) {
    return `Type ${like} for ${name}, like ${example}.`;
  }
  if (!NUMBER.test(value) || !Number.isFinite(Number(value))) {
    return `“${value}” is not a number: ${name} takes ${like}, like ${example}.`;
  }
  if (kind === 'int' && !Number.isInteger(Number(value))) {
    return `${value} is not a whole number: ${name} takes an int, like ${example}.`;
  }
  return null;
}
