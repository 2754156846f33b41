/**
 * The parameters part of the submit dialog: one typed input per simple
 * assignment of the `parameters` cell, and the other lines shown read-only.
 */
import { JSONValue } from '@lumino/coreutils';

import { h, liveValidate, textInput } from '../components/form';
import { LiteralError, parsePythonLiteral, toPython } from './literal';
import { IParameter, IParametersCell } from './params';

interface IField {
  parameter: IParameter;
  read: () => JSONValue;
}

const KIND_LABEL: Record<IParameter['kind'], string> = {
  int: 'int',
  float: 'float',
  str: 'str',
  bool: 'bool',
  literal: 'literal'
};

export class ParameterFields {
  constructor(cell: IParametersCell | null) {
    this.node = h('div', {
      class: 'jp-GpuEnv-params',
      'data-testid': 'gpu-env-submit-params'
    });
    if (cell === null) {
      this.node.append(
        h(
          'div',
          { class: 'jp-GpuEnv-fieldHint' },
          'No cell is tagged “parameters”: the notebook runs as saved. ' +
            'Tag the cell that sets the defaults to change them here.'
        )
      );
      return;
    }
    if (cell.parameters.length) {
      const grid = h('div', { class: 'jp-GpuEnv-paramGrid' });
      for (const parameter of cell.parameters) {
        grid.append(...this._row(parameter));
      }
      this.node.append(grid);
    } else {
      this.node.append(
        h(
          'div',
          { class: 'jp-GpuEnv-fieldHint' },
          'The parameters cell assigns no plain values to change here.'
        )
      );
    }
    if (cell.other.length) {
      this.node.append(
        h(
          'div',
          { class: 'jp-GpuEnv-fieldHint' },
          'Also in the cell, run as written (not plain values):'
        ),
        h(
          'pre',
          {
            class: 'jp-GpuEnv-paramOther',
            'data-testid': 'gpu-env-submit-params-other'
          },
          cell.other.join('\n')
        )
      );
    }
  }

  readonly node: HTMLDivElement;

  /** Whether the cell offers any value to change. */
  get isEmpty(): boolean {
    return this._fields.length === 0;
  }

  /** The values that differ from the cell's defaults. */
  changed(): Record<string, JSONValue> {
    const result: Record<string, JSONValue> = {};
    for (const { parameter, read } of this._fields) {
      const value = read();
      if (JSON.stringify(value) !== JSON.stringify(parameter.value)) {
        result[parameter.name] = value;
      }
    }
    return result;
  }

  private _row(parameter: IParameter): HTMLElement[] {
    const id = `jp-GpuEnv-param-${parameter.name}`;
    const label = h(
      'label',
      { class: 'jp-GpuEnv-paramName', for: id, title: parameter.source },
      parameter.name
    );
    const { control, read } = this._control(parameter, id);
    const type = h(
      'span',
      { class: 'jp-GpuEnv-paramType' },
      parameter.annotation ?? KIND_LABEL[parameter.kind]
    );
    this._fields.push({ parameter, read });
    return [label, control, type];
  }

  private _control(
    parameter: IParameter,
    id: string
  ): { control: HTMLElement; read: () => JSONValue } {
    const data = { id, 'data-param': parameter.name };
    const { kind, value } = parameter;
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
      return { control, read: () => box.checked };
    }
    if (kind === 'int' || kind === 'float') {
      const input = h('input', {
        type: 'number',
        class: 'jp-mod-styled',
        step: kind === 'int' ? '1' : 'any',
        required: true,
        ...data
      });
      input.value = /^[-+]?[\d.eE+-]+$/.test(parameter.source)
        ? parameter.source.replace(/^\+/, '')
        : String(value);
      return { control: input, read: () => Number(input.value) };
    }
    if (kind === 'str') {
      const input = textInput(data);
      input.value = String(value);
      return { control: input, read: () => input.value };
    }
    // None, lists, tuples and dicts: a Python literal, checked as typed.
    const input = textInput({
      ...data,
      class: 'jp-mod-styled jp-GpuEnv-paramLiteral',
      title: "A Python literal: None, 3, 'text', [1, 2], {'k': 1}"
    });
    // One line: a literal written over several lines is shown rewritten.
    input.value = parameter.source.includes('\n')
      ? toPython(parameter.value)
      : parameter.source;
    const problem = h('div', {
      class: 'jp-GpuEnv-fieldProblem',
      role: 'alert',
      hidden: true
    });
    liveValidate(input, problem, text => {
      try {
        parsePythonLiteral(text);
        return null;
      } catch (error) {
        if (error instanceof LiteralError) {
          return `Not a Python literal: ${error.message}`;
        }
        throw error;
      }
    });
    const control = h('div', { class: 'jp-GpuEnv-paramLiteralBox' }, input);
    control.append(problem);
    return { control, read: () => parsePythonLiteral(input.value) };
  }

  private _fields: IField[] = [];
}
