/**
 * The inputs of one notebook parameter in the submit dialog: the one-value
 * control (typed by the parameter's kind) and the sweep-mode one, each with
 * a reader of what the user typed.
 */
import { JSONValue } from '@lumino/coreutils';

import type { INotebookParameter } from '../../api/types';
import { h, liveValidate, select, textInput } from '../../components/form';
import { SEVERAL_HINT, readSeveral } from '../sweeps/values';
import {
  hasLiteralDefault,
  jsonProblem,
  numberProblem,
  numberText,
  quoteForSweep
} from './param-values';

export function singleControl(
  parameter: INotebookParameter,
  data: Record<string, string | undefined>
): {
  control: HTMLElement;
  read: () => JSONValue | undefined;
  written: () => string;
} {
  const { kind, default_text: written } = parameter;
  const value = parameter.default as JSONValue;
  if (kind === 'bool') {
    const box = h('input', { type: 'checkbox', ...data });
    box.checked = value === true;
    const text = h('span', {});
    const show = (): void => {
      text.textContent = box.checked ? 'True' : 'False';
    };
    box.addEventListener('change', show);
    show();
    const control = h('label', { class: 'jp-GpuEnv-paramBool' }, box, text);
    return {
      control,
      read: () => box.checked,
      written: () => String(box.checked)
    };
  }
  if (kind === 'int' || kind === 'float') {
    // A text field checked as typed, so that a wrong value says why (a
    // number input only empties itself, and Submit goes grey unexplained).
    const input = textInput({
      ...data,
      inputmode: kind === 'int' ? 'numeric' : 'decimal',
      'data-kind': kind,
      required: true
    });
    input.value = numberText(written, value);
    const example = input.value || (kind === 'int' ? '10' : '0.5');
    const problem = h('div', {
      class: 'jp-GpuEnv-fieldProblem',
      role: 'alert',
      hidden: true
    });
    liveValidate(input, problem, text =>
      numberProblem(kind, text, parameter.name, example)
    );
    return {
      control: h('div', { class: 'jp-GpuEnv-paramLiteralBox' }, input, problem),
      read: () => Number(input.value.trim()),
      written: () => input.value.trim()
    };
  }
  if (kind === 'str') {
    const input = textInput(data);
    input.value = String(value);
    return {
      control: input,
      read: () => input.value,
      written: () => quoteForSweep(input.value)
    };
  }
  // Any JSON value as text; a default that is an expression is shown as
  // the placeholder and sent only when the user types a value.
  const literal = hasLiteralDefault(parameter);
  const input = textInput({
    ...data,
    class: 'jp-mod-styled jp-GpuEnv-paramLiteral',
    placeholder: literal ? undefined : written,
    title: data.title ?? 'A JSON value: null, 3, "text", [1, 2], {"k": 1}'
  });
  input.value = literal ? JSON.stringify(value) : '';
  const problem = h('div', {
    class: 'jp-GpuEnv-fieldProblem',
    role: 'alert',
    hidden: true
  });
  liveValidate(input, problem, text => jsonProblem(text, !literal));
  const control = h('div', { class: 'jp-GpuEnv-paramLiteralBox' }, input);
  control.append(problem);
  const read = (): JSONValue | undefined =>
    !literal && !input.value.trim()
      ? undefined
      : (JSON.parse(input.value) as JSONValue);
  return { control, read, written: () => input.value };
}

/** The sweep-mode control: a text field (a choice for booleans). */
export function severalControl(
  parameter: INotebookParameter,
  data: Record<string, string | undefined>
): {
  control: HTMLElement;
  read: () => JSONValue[] | undefined;
  set: (text: string) => void;
} {
  if (parameter.kind === 'bool') {
    const choice = select(
      [
        ['false', 'False'],
        ['true', 'True'],
        ['both', 'Both: False, then True']
      ],
      'false',
      data
    );
    const values: Record<string, boolean[]> = {
      false: [false],
      true: [true],
      both: [false, true]
    };
    return {
      control: choice,
      read: () => values[choice.value],
      set: text => {
        choice.value = text === 'true' ? 'true' : 'false';
      }
    };
  }
  const optional = !hasLiteralDefault(parameter);
  const input = textInput({
    ...data,
    class: 'jp-mod-styled jp-GpuEnv-paramValues',
    placeholder: optional ? parameter.default_text : SEVERAL_HINT,
    title: `${data.title ? `${data.title}\n` : ''}${SEVERAL_HINT}`
  });
  const problem = h('div', {
    class: 'jp-GpuEnv-fieldProblem',
    role: 'alert',
    hidden: true
  });
  const check = liveValidate(input, problem, text => {
    try {
      readSeveral(parameter.kind, text, optional);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  });
  const control = h(
    'div',
    { class: 'jp-GpuEnv-paramLiteralBox jp-GpuEnv-paramValuesBox' },
    input,
    problem
  );
  return {
    control,
    read: () => readSeveral(parameter.kind, input.value, optional),
    set: text => {
      input.value = text;
      check();
    }
  };
}
