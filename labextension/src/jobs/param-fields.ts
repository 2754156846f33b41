/**
 * The parameters part of the submit dialog, built from the server's reading
 * of the notebook's `parameters` cell (`GET notebooks/parameters`): one
 * typed input per parameter, its comment as the hint. The server checks the
 * values again on submission and its refusal is what the dialog shows.
 */
import { JSONValue } from '@lumino/coreutils';

import type { INotebookParameter, INotebookParameters } from '../api/types';
import { h, liveValidate, textInput } from '../components/form';

interface IField {
  parameter: INotebookParameter;
  /** The value to send, or undefined to leave the cell's default. */
  read: () => JSONValue | undefined;
}

/** Whether the default is a value (else an expression kept as written). */
function hasLiteralDefault(parameter: INotebookParameter): boolean {
  return parameter.default !== null || parameter.default_text === 'None';
}

function hint(text: string): HTMLElement {
  return h('div', { class: 'jp-GpuEnv-fieldHint' }, text);
}

export class ParameterFields {
  /**
   * `info` is the server's answer, or null with `error` when it could not
   * be had.
   */
  constructor(info: INotebookParameters | null, error?: string) {
    this.node = h('div', {
      class: 'jp-GpuEnv-params',
      'data-testid': 'gpu-env-submit-params'
    });
    const note = ParameterFields.describe(info, error);
    if (note !== null || !info) {
      this.node.append(hint(note ?? ''));
      return;
    }
    const grid = h('div', { class: 'jp-GpuEnv-paramGrid' });
    for (const parameter of info.parameters) {
      grid.append(...this._row(parameter));
    }
    this.node.append(grid);
  }

  readonly node: HTMLDivElement;

  /** Why there is no field to fill, in words; null when there are some. */
  static describe(
    info: INotebookParameters | null,
    error?: string
  ): string | null {
    if (!info) {
      return (
        `Could not read the notebook's parameters: ${error ?? 'no answer'}. ` +
        'The notebook runs with the values it sets.'
      );
    }
    if (info.cell_index === null) {
      return (
        'No cell is tagged “parameters”: the notebook runs as saved. ' +
        'Tag the cell that sets the defaults to change them here.'
      );
    }
    if (!info.inspectable) {
      const language = info.language ?? 'this kernel’s language';
      return (
        `Papermill cannot inspect the parameters of ${language}: the ` +
        'notebook runs with the values its parameters cell sets.'
      );
    }
    if (info.parameters.length === 0) {
      return 'The parameters cell assigns no value to change here.';
    }
    return null;
  }

  /** The values that differ from the cell's defaults. */
  changed(): Record<string, JSONValue> {
    const result: Record<string, JSONValue> = {};
    for (const { parameter, read } of this._fields) {
      const value = read();
      if (value === undefined) {
        continue;
      }
      const same =
        hasLiteralDefault(parameter) &&
        JSON.stringify(value) === JSON.stringify(parameter.default);
      if (!same) {
        result[parameter.name] = value;
      }
    }
    return result;
  }

  private _row(parameter: INotebookParameter): HTMLElement[] {
    const id = `jp-GpuEnv-param-${parameter.name}`;
    const label = h(
      'label',
      { class: 'jp-GpuEnv-paramName', for: id, title: parameter.default_text },
      parameter.name
    );
    const { control, read } = this._control(parameter, {
      id,
      'data-param': parameter.name,
      title: parameter.help || undefined
    });
    const type = h(
      'span',
      { class: 'jp-GpuEnv-paramType jp-GpuEnv-note' },
      parameter.annotation ?? parameter.kind
    );
    this._fields.push({ parameter, read });
    const row = [label, control, type];
    if (parameter.help) {
      row.push(
        h(
          'div',
          { class: 'jp-GpuEnv-fieldHint jp-GpuEnv-paramHelp' },
          parameter.help
        )
      );
    }
    return row;
  }

  private _control(
    parameter: INotebookParameter,
    data: Record<string, string | undefined>
  ): { control: HTMLElement; read: () => JSONValue | undefined } {
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
      input.value = /^[-+]?[\d.eE+-]+$/.test(written)
        ? written.replace(/^\+/, '')
        : String(value);
      return { control: input, read: () => Number(input.value) };
    }
    if (kind === 'str') {
      const input = textInput(data);
      input.value = String(value);
      return { control: input, read: () => input.value };
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
    liveValidate(input, problem, text => {
      if (!literal && !text.trim()) {
        return null;
      }
      try {
        JSON.parse(text);
        return null;
      } catch (error) {
        return `Not JSON: ${error instanceof Error ? error.message : error}`;
      }
    });
    const control = h('div', { class: 'jp-GpuEnv-paramLiteralBox' }, input);
    control.append(problem);
    const read = (): JSONValue | undefined =>
      !literal && !input.value.trim()
        ? undefined
        : (JSON.parse(input.value) as JSONValue);
    return { control, read };
  }

  private _fields: IField[] = [];
}
