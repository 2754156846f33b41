/**
 * Sweep values as the submit dialog reads them: ranges, comma lists, one
 * value, and the check against a parameter's kind (as the server's CLI).
 */
import {
  MAX_RANGE,
  describeCounts,
  describeParameters,
  describeRuns,
  formatValue,
  parseValue,
  rangeValues,
  readSeveral,
  sweepValues,
  valueLabel
} from '../../../src/jobs/sweeps/values';

describe('valueLabel and describeCounts', () => {
  it('tells a recorded value named like a parameter apart', () => {
    expect(valueLabel('alpha', ['alpha', 'lr'])).toBe('value: alpha');
    expect(valueLabel('loss', ['alpha', 'lr'])).toBe('loss');
  });

  it('says how a sweep ended, run by run', () => {
    expect(describeCounts({ succeeded: 8, cancelled: 1, failed: 0 })).toBe(
      '8 succeeded, 1 cancelled'
    );
  });
});

describe('parseValue', () => {
  it('reads JSON first, then Python literals, else keeps the text', () => {
    expect(parseValue('5')).toBe(5);
    expect(parseValue('0.1')).toBe(0.1);
    expect(parseValue('true')).toBe(true);
    expect(parseValue('[1, 2]')).toEqual([1, 2]);
    expect(parseValue('"a,b"')).toBe('a,b');
    expect(parseValue('True')).toBe(true);
    expect(parseValue('False')).toBe(false);
    expect(parseValue('None')).toBeNull();
    expect(parseValue('adam')).toBe('adam');
    expect(parseValue('none')).toBe('none');
  });
});

describe('rangeValues', () => {
  it('includes the stop when a step lands on it', () => {
    expect(rangeValues('0:1:0.25')).toEqual([0, 0.25, 0.5, 0.75, 1]);
    expect(rangeValues('1:10:3')).toEqual([1, 4, 7, 10]);
    expect(rangeValues('1:9:3')).toEqual([1, 4, 7]);
  });

  it('steps by one when the step is left out, and counts down', () => {
    expect(rangeValues('1:4')).toEqual([1, 2, 3, 4]);
    expect(rangeValues(' 3 : 1 : -1 ')).toEqual([3, 2, 1]);
    expect(rangeValues('5:5')).toEqual([5]);
  });

  it('keeps integers whole and rounds floats to 12 digits', () => {
    const values = rangeValues('0:0.3:0.1') ?? [];
    expect(values).toEqual([0, 0.1, 0.2, 0.3]);
    expect(values.every(v => Number.isFinite(v))).toBe(true);
    expect(rangeValues('0:2:1')?.every(Number.isInteger)).toBe(true);
    expect(rangeValues('1e-3:3e-3:1e-3')).toEqual([0.001, 0.002, 0.003]);
  });

  it('is null for what is no range', () => {
    expect(rangeValues('1, 2')).toBeNull();
    expect(rangeValues('a:b')).toBeNull();
    expect(rangeValues('1:2:3:4')).toBeNull();
    // A clock reads as a range, and one that goes nowhere.
    expect(() => rangeValues('12:00')).toThrow(/'12:00' makes no values/);
  });

  it('refuses a range that makes no values or too many', () => {
    expect(() => rangeValues('0:1:0')).toThrow(/makes no values/);
    expect(() => rangeValues('1:0:1')).toThrow(/step goes away from its end/);
    expect(() => rangeValues(`0:${MAX_RANGE}`)).toThrow(
      /makes 100,001 values; at most 100,000/
    );
    expect(rangeValues(`1:${MAX_RANGE}`)).toHaveLength(MAX_RANGE);
  });
});

describe('sweepValues', () => {
  it('reads a range or a comma list, each item as a value', () => {
    expect(sweepValues('0:2')).toEqual([0, 1, 2]);
    expect(sweepValues('1, 2.5, x, True')).toEqual([1, 2.5, 'x', true]);
  });

  it('is null for one value, a JSON list included', () => {
    expect(sweepValues('3')).toBeNull();
    expect(sweepValues('adam')).toBeNull();
    expect(sweepValues('[1, 2]')).toBeNull();
    expect(sweepValues('{"a": 1, "b": 2}')).toBeNull();
  });
});

describe('readSeveral', () => {
  it('checks numbers against the kind', () => {
    expect(readSeveral('int', '1, 2, 3')).toEqual([1, 2, 3]);
    expect(readSeveral('int', '1:3')).toEqual([1, 2, 3]);
    expect(readSeveral('float', '0.1, 1')).toEqual([0.1, 1]);
    expect(readSeveral('float', '7')).toEqual([7]);
    expect(() => readSeveral('int', '1, 2.5')).toThrow(
      '2.5 is not a whole number'
    );
    expect(() => readSeveral('float', '1, x')).toThrow('x is not a number');
    expect(() => readSeveral('bool', 'True, 1')).toThrow(
      '1 is not True or False'
    );
    expect(readSeveral('bool', 'False, True')).toEqual([false, true]);
  });

  it('keeps texts as typed, quoted ones whole', () => {
    expect(readSeveral('str', 'adam')).toEqual(['adam']);
    expect(readSeveral('str', 'adam, sgd')).toEqual(['adam', 'sgd']);
    expect(readSeveral('str', '"a, b"')).toEqual(['a, b']);
    expect(readSeveral('str', '1, 2')).toEqual(['1', '2']);
    // A leading quote makes the whole field one text.
    expect(readSeveral('str', '"x", y')).toEqual(['"x", y']);
  });

  it('reads literals as JSON: one list, or a list of values', () => {
    expect(readSeveral('literal', '[1, 2]')).toEqual([[1, 2]]);
    expect(readSeveral('literal', '{"a": 1}, null')).toEqual([{ a: 1 }, null]);
    expect(readSeveral('literal', '0:2')).toEqual([0, 1, 2]);
    expect(() => readSeveral('literal', 'nope')).toThrow(/^Not JSON: nope/);
  });

  it('asks for a value unless the field may stay empty', () => {
    expect(() => readSeveral('int', '  ')).toThrow(/^Type a value: one value/);
    expect(readSeveral('int', '', true)).toBeUndefined();
  });
});

describe('labels', () => {
  it('describeRuns says how many and how many at once', () => {
    expect(describeRuns(1, null)).toBe('1 run');
    expect(describeRuns(1200, null)).toBe('1,200 runs');
    expect(describeRuns(12, 2)).toBe('12 runs, 2 at a time');
    expect(describeRuns(2, 4)).toBe('2 runs');
    expect(describeRuns(1, 1)).toBe('1 run');
  });

  it('formatValue shows text as is, floats short, the rest as JSON', () => {
    expect(formatValue('adam')).toBe('adam');
    expect(formatValue(0.1 + 0.2)).toBe('0.3');
    expect(formatValue(3)).toBe('3');
    expect(formatValue(null)).toBe('null');
    expect(formatValue([1, 'a'])).toBe('[1,"a"]');
    expect(formatValue(undefined)).toBe('undefined');
  });

  it('describeParameters joins name=value pairs', () => {
    expect(describeParameters({ alpha: 0.1, opt: 'adam' })).toBe(
      'alpha=0.1 · opt=adam'
    );
    expect(describeParameters({ a: true, b: null }, ', ')).toBe(
      'a=true, b=null'
    );
    expect(describeParameters({})).toBe('');
  });
});
