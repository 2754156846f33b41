/**
 * The parameters part of the submit dialog, built from the server's reading
 * of the notebook's `parameters` cell (`GET notebooks/parameters`): one
 * typed input per parameter, its comment as the hint. The server checks the
 * values again on submission and its refusal is what the dialog shows.
 *
 * In sweep mode each parameter takes one value or several (a comma list or
 * a range, read as `../sweeps/values.ts` says), each checked against the
 * parameter's kind; the notebook then runs once per combination.
 */
import { JSONValue } from '@lumino/coreutils';

import type { INotebookParameter, INotebookParameters } from '../../api/types';
import { h } from '../../components/form';
import { severalControl, singleControl } from './param-controls';
import { isDefault } from './param-values';

interface IField {
  parameter: INotebookParameter;
  /** The value to send, or undefined to leave the cell's default. */
  read: () => JSONValue | undefined;
  /** The one-value control and the several-values one (one is shown). */
  single: HTMLElement;
  several: HTMLElement;
  /** The single value as the several-values field writes it. */
  written: () => string;
  /** Put `text` in the several-values field. */
  setSeveral: (text: string) => void;
  /** The values typed in sweep mode (undefined: the cell's default). */
  readSeveral: () => JSONValue[] | undefined;
}

/** What the sweep-mode fields ask for. */
export interface ISweepValues {
  /** Names with one value (those that differ from the cell's defaults). */
  fixed: Record<string, JSONValue>;
  /** Names with several values, in the form's order. */
  swept: Record<string, JSONValue[]>;
  /** Runs: the product of the numbers of values. */
  count: number;
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

  /** Whether there is a field to fill. */
  get hasFields(): boolean {
    return this._fields.length > 0;
  }

  /** Whether the fields take several values each (a sweep). */
  get sweep(): boolean {
    return this._sweep;
  }
  set sweep(on: boolean) {
    if (on === this._sweep) {
      return;
    }
    this._sweep = on;
    this.node.dataset.sweep = String(on);
    for (const field of this._fields) {
      if (on) {
        field.setSeveral(field.written());
      }
      show(field.single, !on);
      show(field.several, on);
    }
  }

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
      if (value !== undefined && !isDefault(parameter, value)) {
        result[parameter.name] = value;
      }
    }
    return result;
  }

  /**
   * What the sweep-mode fields hold; throws with the parameter's name and
   * the reason when a field holds a value its parameter cannot take.
   */
  sweepValues(): ISweepValues {
    const result: ISweepValues = { fixed: {}, swept: {}, count: 1 };
    for (const { parameter, readSeveral } of this._fields) {
      let values: JSONValue[] | undefined;
      try {
        values = readSeveral();
      } catch (error) {
        const why = error instanceof Error ? error.message : String(error);
        throw new Error(`${parameter.name}: ${why}`);
      }
      if (values === undefined) {
        continue;
      }
      if (values.length > 1) {
        result.swept[parameter.name] = values;
        result.count *= values.length;
      } else if (!isDefault(parameter, values[0])) {
        result.fixed[parameter.name] = values[0];
      }
    }
    return result;
  }

  /** Mark the fields a server message names (`'alpha'`), clear the others. */
  markErrors(message: string): void {
    for (const { parameter, single, several } of this._fields) {
      const named = message.includes(`'${parameter.name}'`);
      for (const control of [single, several]) {
        const input = control.matches('input, select')
          ? control
          : control.querySelector('input, select');
        input?.classList.toggle('jp-GpuEnv-inputError', named);
      }
    }
  }

  private _row(parameter: INotebookParameter): HTMLElement[] {
    const id = `jp-GpuEnv-param-${parameter.name}`;
    const label = h(
      'label',
      { class: 'jp-GpuEnv-paramName', for: id, title: parameter.default_text },
      parameter.name
    );
    const title = parameter.help || undefined;
    const { control, read, written } = singleControl(parameter, {
      id,
      'data-param': parameter.name,
      title
    });
    const several = severalControl(parameter, {
      'data-param-values': parameter.name,
      'aria-label': `Values of ${parameter.name}`,
      title
    });
    show(several.control, false);
    const type = h(
      'span',
      { class: 'jp-GpuEnv-paramType jp-GpuEnv-note' },
      parameter.annotation ?? parameter.kind
    );
    this._fields.push({
      parameter,
      read,
      single: control,
      several: several.control,
      written,
      setSeveral: several.set,
      readSeveral: several.read
    });
    const box = h(
      'div',
      { class: 'jp-GpuEnv-paramControl' },
      control,
      several.control
    );
    const row = [label, box, type];
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

  private _fields: IField[] = [];
  private _sweep = false;
}

/**
 * Show or hide a control; a hidden one is disabled too, so that the
 * dialog's check of `:invalid` inputs looks only at the shown ones.
 */
function show(control: HTMLElement, visible: boolean): void {
  control.hidden = !visible;
  const inputs = control.matches('input, select')
    ? [control]
    : Array.from(control.querySelectorAll('input, select'));
  for (const input of inputs) {
    (input as HTMLInputElement).disabled = !visible;
  }
}
