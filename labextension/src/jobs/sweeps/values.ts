/**
 * Several values typed in one field, read as the server's CLI reads a
 * swept `-p` (jupyter_gpu_env/cli/jobs.py `sweep_values`, batch/sweeps.py
 * `range_values`): a range `start:stop:step`, else a comma list, else one
 * value; and checked against a parameter's kind (`readSeveral`). Pure
 * functions, shared by the submit dialog and its tests.
 */
import type { JSONValue } from '@lumino/coreutils';

import type { ParamKind } from '../../api/types';

/** Runs the dialog accepts without a warning (the server's default). */
export const SWEEP_LIMIT = 1000;
/** Values one range may make (as the server). */
export const MAX_RANGE = 100_000;

const NUMBER = String.raw`-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?`;
const RANGE = new RegExp(
  String.raw`^\s*(${NUMBER})\s*:\s*(${NUMBER})\s*(?::\s*(${NUMBER})\s*)?$`
);

/**
 * A value as papermill reads a `-p`: JSON where it parses (5, 0.1, true,
 * [1, 2]), Python's True/False/None, else the text itself.
 */
export function parseValue(text: string): JSONValue {
  try {
    return JSON.parse(text) as JSONValue;
  } catch {
    // Not JSON: below.
  }
  const python: Record<string, JSONValue> = {
    True: true,
    False: false,
    None: null
  };
  return text in python ? python[text] : text;
}

/**
 * `start:stop:step` (step 1 when left out) as its values, `stop` included
 * when a step lands on it: `0:1:0.25` is 0, 0.25, 0.5, 0.75, 1. Integers
 * when all three are written as integers, else floats rounded to 12
 * significant digits. Null when `text` is no range; throws for a range
 * that makes no values or too many.
 */
export function rangeValues(text: string): number[] | null {
  const match = RANGE.exec(text);
  if (!match) {
    return null;
  }
  const start = Number(match[1]);
  const stop = Number(match[2]);
  const step = match[3] ? Number(match[3]) : 1;
  if (step === 0 || (stop - start) * step < 0) {
    throw new Error(
      `the range '${text.trim()}' makes no values: its step goes away from its end`
    );
  }
  const count = Math.floor((stop - start) / step + 1e-9) + 1;
  if (count > MAX_RANGE) {
    throw new Error(
      `the range '${text.trim()}' makes ${count.toLocaleString('en-US')} ` +
        `values; at most ${MAX_RANGE.toLocaleString('en-US')}`
    );
  }
  const whole = match
    .slice(1)
    .every(group => group === undefined || /^-?\d+$/.test(group));
  const values: number[] = [];
  for (let i = 0; i < count; i++) {
    const value = start + i * step;
    values.push(whole ? Math.trunc(value) : Number(value.toPrecision(12)));
  }
  return values;
}

/**
 * The values of a field: a range or a comma list (each item read by
 * {@link parseValue}); null for one value (JSON such as `[1, 2]` or
 * `"a,b"` is one value). Throws for a range that makes no values.
 */
export function sweepValues(text: string): JSONValue[] | null {
  const range = rangeValues(text);
  if (range !== null) {
    return range;
  }
  if (!text.includes(',') || typeof parseValue(text) !== 'string') {
    return null;
  }
  return text.split(',').map(part => parseValue(part.trim()));
}

/** `12 runs, 2 at a time`; `1 run`. */
export function describeRuns(count: number, atOnce: number | null): string {
  const runs = `${count.toLocaleString('en-US')} ${count === 1 ? 'run' : 'runs'}`;
  return atOnce !== null && count > 1 && atOnce < count
    ? `${runs}, ${atOnce.toLocaleString('en-US')} at a time`
    : runs;
}

/**
 * A recorded value's heading in the table, chart and CSV: its name, or
 * `value: alpha` where a parameter has that name.
 */
export function valueLabel(name: string, parameters: string[]): string {
  return parameters.includes(name) ? `value: ${name}` : name;
}

/** `8 succeeded, 1 cancelled`: a sweep's runs per state, those there are. */
export function describeCounts(
  counts: Partial<Record<string, number>>
): string {
  return ['succeeded', 'failed', 'cancelled', 'running', 'queued']
    .filter(state => (counts[state] ?? 0) > 0)
    .map(state => `${counts[state]} ${state}`)
    .join(', ');
}

/** A value as a sweep's labels show it: text as is, the rest as JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' && !Number.isInteger(value)) {
    return String(Number(value.toPrecision(6)));
  }
  return JSON.stringify(value) ?? String(value);
}

/** `alpha=0.1 · lr=0.01`: parameters in a line (empty for none). */
export function describeParameters(
  parameters: Record<string, unknown>,
  separator = ' · '
): string {
  return Object.entries(parameters)
    .map(([name, value]) => `${name}=${formatValue(value)}`)
    .join(separator);
}

/** The hint of a several-values field. */
export const SEVERAL_HINT = 'One value, a list (1, 2, 3) or a range (0:1:0.25)';

/**
 * The values a sweep-mode field holds for a parameter of `kind`; throws
 * with the reason when one does not fit. `optional`: an empty field leaves
 * the cell's default (undefined).
 */
export function readSeveral(
  kind: ParamKind,
  text: string,
  optional = false
): JSONValue[] | undefined {
  if (!text.trim()) {
    if (optional) {
      return undefined;
    }
    throw new Error(`Type a value: ${SEVERAL_HINT.toLowerCase()}`);
  }
  if (kind === 'str') {
    const whole = parseValue(text.trim());
    if (typeof whole === 'string' && /^\s*"/.test(text)) {
      return [whole];
    }
    if (!text.includes(',')) {
      return [text];
    }
    return text.split(',').map(part => {
      const item = parseValue(part.trim());
      return typeof item === 'string' ? item : part.trim();
    });
  }
  if (kind === 'literal') {
    return readJsonValues(text);
  }
  const values = sweepValues(text) ?? [parseValue(text.trim())];
  for (const value of values) {
    const shown = formatValue(value);
    if (kind === 'int' && !Number.isInteger(value)) {
      throw new Error(`${shown} is not a whole number`);
    }
    if (kind === 'float' && typeof value !== 'number') {
      throw new Error(`${shown} is not a number`);
    }
    if (kind === 'bool' && typeof value !== 'boolean') {
      throw new Error(`${shown} is not True or False`);
    }
  }
  return values;
}

/** Any JSON value, a range, or a comma list of JSON values. */
function readJsonValues(text: string): JSONValue[] {
  const parse = (item: string): JSONValue => {
    try {
      return JSON.parse(item) as JSONValue;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new Error(`Not JSON: ${item} (${why})`);
    }
  };
  if (!text.includes(',')) {
    return sweepValues(text) ?? [parse(text.trim())];
  }
  try {
    return [JSON.parse(text) as JSONValue];
  } catch {
    return text.split(',').map(part => parse(part.trim()));
  }
}
