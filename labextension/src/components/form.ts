/**
 * Small DOM builders for dialog forms, styled as JupyterLab's own dialogs
 * (`jp-mod-styled` inputs and selects).
 *
 * Dialog bodies are plain DOM rather than React: JupyterLab's Dialog checks
 * `:invalid` inputs on every `input` event (capture phase, before any React
 * handler runs), and a synchronous custom validity keeps its accept button
 * in step with what the user typed.
 */

import { Dialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

type Attributes = Record<string, string | boolean | number | undefined>;

/** A dialog body: a column of fields whose `getValue()` is the answer. */
export abstract class FormBody<T>
  extends Widget
  implements Dialog.IBodyWidget<T>
{
  constructor() {
    super({ node: h('div', { class: 'jp-GpuEnv-form' }) });
  }

  abstract getValue(): T;
}

/** Create an element with attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Node | string | null)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) {
      continue;
    }
    node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children) {
    if (child !== null) {
      node.append(child);
    }
  }
  return node;
}

/** A labelled field: the label above, a control, and an optional hint. */
export function field(
  label: string,
  control: HTMLElement,
  hint?: string
): HTMLDivElement {
  const id = control.id || `jp-GpuEnv-field-${++fieldCount}`;
  control.id = id;
  const node = h(
    'div',
    { class: 'jp-GpuEnv-field' },
    h('label', { class: 'jp-GpuEnv-fieldLabel', for: id }, label),
    control
  );
  if (hint) {
    node.append(h('div', { class: 'jp-GpuEnv-fieldHint' }, hint));
  }
  return node;
}

let fieldCount = 0;

/** A titled group of fields: a `<fieldset>` and its `<legend>`. */
export function formSection(
  title: string,
  ...children: HTMLElement[]
): HTMLFieldSetElement {
  return h(
    'fieldset',
    { class: 'jp-GpuEnv-formSection' },
    h('legend', {}, title),
    ...children
  );
}

/** A styled `<select>` with `[value, label]` options. */
export function select(
  options: readonly (readonly [string, string])[],
  value?: string,
  attributes: Attributes = {}
): HTMLSelectElement {
  const node = h('select', { class: 'jp-mod-styled', ...attributes });
  for (const [optionValue, label] of options) {
    node.append(h('option', { value: optionValue }, label));
  }
  if (value !== undefined) {
    node.value = value;
  }
  return node;
}

/** A styled text `<input>`. */
export function textInput(attributes: Attributes = {}): HTMLInputElement {
  return h('input', {
    type: 'text',
    class: 'jp-mod-styled',
    autocomplete: 'off',
    spellcheck: 'false',
    ...attributes
  });
}

/**
 * A whole-number input as text: a number input empties itself on `abc` and
 * says nothing, where this one, checked as typed, can say why.
 */
export function wholeNumberInput(
  attributes: Attributes = {}
): HTMLInputElement {
  return textInput({ inputmode: 'numeric', ...attributes });
}

/**
 * A labelled field whose input is checked as typed (`liveValidate`): what
 * is wrong shows under it, and the dialog's accept waits until it is fixed.
 */
export function checkedField(
  label: string,
  input: HTMLInputElement,
  problem: (value: string) => string | null
): HTMLDivElement {
  const node = field(label, input);
  const message = h('div', {
    class: 'jp-GpuEnv-fieldProblem',
    role: 'alert',
    hidden: true
  });
  node.append(message);
  liveValidate(input, message, problem);
  return node;
}

/**
 * Validate `input` on every keystroke: `problem` says what is wrong (or
 * null), shown in `message` and set as the input's custom validity, so the
 * Dialog disables its accept button while the value is invalid.
 */
export function liveValidate(
  input: HTMLInputElement,
  message: HTMLElement,
  problem: (value: string) => string | null
): () => boolean {
  const check = (): boolean => {
    const text = problem(input.value);
    input.setCustomValidity(text ?? '');
    message.textContent = text ?? '';
    message.hidden = text === null;
    return text === null;
  };
  input.addEventListener('input', event => {
    if (!event.isTrusted) {
      return;
    }
    check();
    // The Dialog checked validity before this handler ran: let it look again.
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  return check;
}
