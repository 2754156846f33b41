/**
 * The parameter fields' rules: which defaults are values (and so are not
 * sent again), how a number is first written, what a sweep field quotes.
 */
import type { INotebookParameter } from '../../../src/api/types';
import {
  hasLiteralDefault,
  isDefault,
  jsonProblem,
  numberProblem,
  numberText,
  quoteForSweep
} from '../../../src/jobs/submit/param-values';

function parameter(
  default_: INotebookParameter['default'],
  defaultText: string
): INotebookParameter {
  return {
    name: 'p',
    kind: 'literal',
    default: default_,
    default_text: defaultText,
    annotation: null,
    help: ''
  } as INotebookParameter;
}

describe('defaults', () => {
  it('a default is a value unless it is an expression', () => {
    expect(hasLiteralDefault(parameter(3, '3'))).toBe(true);
    expect(hasLiteralDefault(parameter(null, 'None'))).toBe(true);
    expect(hasLiteralDefault(parameter(null, 'np.arange(3)'))).toBe(false);
  });

  it('the default value is not sent again, an expression never matches', () => {
    expect(isDefault(parameter(0.1, '0.1'), 0.1)).toBe(true);
    expect(isDefault(parameter(0.1, '0.1'), 0.2)).toBe(false);
    expect(isDefault(parameter([1, 2], '[1, 2]'), [1, 2])).toBe(true);
    expect(isDefault(parameter({ a: 1 }, '{"a": 1}'), { a: 2 })).toBe(false);
    expect(isDefault(parameter(null, 'None'), null)).toBe(true);
    expect(isDefault(parameter(null, 'os.cpu_count()'), null)).toBe(false);
  });
});

describe('numberText', () => {
  it("keeps the cell's writing of a plain number", () => {
    expect(numberText('1e-3', 0.001)).toBe('1e-3');
    expect(numberText('+2', 2)).toBe('2');
    expect(numberText('-0.5', -0.5)).toBe('-0.5');
  });

  it('falls back to the value for anything else', () => {
    expect(numberText('10 ** 3', 1000)).toBe('1000');
    expect(numberText('1_000', 1000)).toBe('1000');
  });
});

describe('quoteForSweep', () => {
  it('quotes a text a sweep field would split or read as JSON', () => {
    expect(quoteForSweep('adam')).toBe('adam');
    expect(quoteForSweep('a,b')).toBe('"a,b"');
    expect(quoteForSweep(' "x')).toBe('" \\"x"');
  });
});

describe('jsonProblem', () => {
  it('accepts JSON and says what is wrong with the rest', () => {
    expect(jsonProblem('[1, 2]', false)).toBeNull();
    expect(jsonProblem('null', false)).toBeNull();
    expect(jsonProblem('[1,', false)).toMatch(/^Not JSON: /);
    expect(jsonProblem("{'a': 1}", false)).toMatch(/^Not JSON: /);
  });

  it('lets an optional field stay empty, not a required one', () => {
    expect(jsonProblem('  ', true)).toBeNull();
    expect(jsonProblem('', false)).toMatch(/^Not JSON: /);
  });
});

describe('a number typed for a single job', () => {
  it('says why a value is not the number the parameter takes', () => {
    expect(numberProblem('float', '1e-3', 'lr', '0.5')).toBeNull();
    expect(numberProblem('float', ' .5 ', 'lr', '0.5')).toBeNull();
    expect(numberProblem('int', '-3', 'epochs', '10')).toBeNull();
    expect(numberProblem('float', 'fast', 'lr', '0.5')).toBe(
      '“fast” is not a number: lr takes a number, like 0.5.'
    );
    expect(numberProblem('int', '2.5', 'epochs', '10')).toBe(
      '2.5 is not a whole number: epochs takes an int, like 10.'
    );
    expect(numberProblem('int', '', 'epochs', '10')).toBe(
      'Type a whole number for epochs, like 10.'
    );
    expect(numberProblem('float', '1e999', 'lr', '0.5')).toMatch(
      /is not a number/
    );
  });
});
