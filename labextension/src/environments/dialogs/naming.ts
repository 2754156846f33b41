/**
 * The bodies of the Environments dialogs that ask a new environment's name
 * (clone, create from a file, share): Lumino widgets whose `getValue()`
 * gives what the user chose, checked live against the names taken.
 */
import {
  FormBody,
  field,
  h,
  liveValidate,
  select,
  textInput
} from '../../components/form';
import type { IPublishRequest } from '../../api/types';
import {
  MAX_DESCRIPTION_LENGTH,
  MAX_ENV_NAME_LENGTH,
  descriptionProblem,
  envNameProblem,
  suggestCloneName
} from '../format';

/**
 * The environment a form is about: chosen in a select when there are
 * several (appended to the form under `label`), else the one given.
 */
export class EnvironmentChoice {
  constructor(
    form: FormBody<unknown>,
    label: string,
    options: { names: string[]; selected: string; testid: string }
  ) {
    this._selected = options.selected;
    if (options.names.length > 1) {
      this.select = select(
        options.names.map(name => [name, name]),
        options.selected,
        { 'data-testid': options.testid }
      );
      form.node.append(field(label, this.select));
    }
  }

  /** The select, or null when there was nothing to choose. */
  readonly select: HTMLSelectElement | null = null;

  get value(): string {
    return this.select ? this.select.value : this._selected;
  }

  private _selected: string;
}

export interface ICloneValue {
  source: string;
  name: string;
}

/** Asks the new environment's name (and its source, when not given). */
export class CloneForm extends FormBody<ICloneValue> {
  constructor(options: CloneForm.IOptions) {
    super();
    const taken = options.taken;
    this._source = new EnvironmentChoice(this, 'Environment to clone', {
      names: options.sources,
      selected: options.source,
      testid: 'gpu-env-clone-source'
    });
    this._name = textInput({
      value: options.name,
      required: true,
      'aria-describedby': 'jp-GpuEnv-cloneProblem',
      'data-testid': 'gpu-env-clone-name'
    });
    const problem = h('div', {
      class: 'jp-GpuEnv-fieldProblem',
      id: 'jp-GpuEnv-cloneProblem',
      role: 'alert',
      'data-testid': 'gpu-env-clone-problem'
    });
    this.node.append(
      field(
        'Name of the new environment',
        this._name,
        "Letters, digits, '.', '_' and '-'; at most 64."
      ),
      problem
    );
    const check = liveValidate(this._name, problem, value =>
      envNameProblem(value, taken)
    );
    // A message from the server (a name it refused) until the user types.
    problem.textContent = options.error ?? '';
    problem.hidden = !options.error;
    this._name.addEventListener('focus', () => this._name.select());

    // A new source brings a new suggestion, unless the user chose a name.
    let suggested = options.name;
    this._source.select?.addEventListener('change', () => {
      if (this._name.value === suggested) {
        suggested = suggestCloneName(this._source.value, taken);
        this._name.value = suggested;
        check();
      }
    });
  }

  getValue(): ICloneValue {
    return {
      source: this._source.value,
      name: this._name.value
    };
  }

  private _source: EnvironmentChoice;
  private _name: HTMLInputElement;
}

export namespace CloneForm {
  export interface IOptions {
    /** Environments that can be cloned; a select shows when more than one. */
    sources: string[];
    /** The source selected at first. */
    source: string;
    /** The name proposed at first. */
    name: string;
    /** Names already listed (refused at once). */
    taken: string[];
    /** The server's message when it refused the previous try. */
    error?: string;
  }
}

/**
 * A field's problem line under it: the server's message when it refused the
 * previous try (until the user types), else what the live check finds.
 */
function problemLine(id: string, testid: string, error?: string): HTMLElement {
  const problem = h('div', {
    class: 'jp-GpuEnv-fieldProblem',
    id,
    role: 'alert',
    'data-testid': testid
  });
  problem.textContent = error ?? '';
  problem.hidden = !error;
  return problem;
}

/**
 * Asks the name of an environment made from a file (the next step shows
 * what it installs).
 */
export class CreateFromFileForm extends FormBody<string> {
  constructor(options: CreateFromFileForm.IOptions) {
    super();
    this._name = textInput({
      value: options.name,
      required: true,
      maxlength: MAX_ENV_NAME_LENGTH,
      'aria-describedby': 'jp-GpuEnv-createProblem',
      'data-testid': 'gpu-env-create-name'
    });
    const problem = problemLine(
      'jp-GpuEnv-createProblem',
      'gpu-env-create-problem',
      options.error
    );
    this.node.append(
      h(
        'p',
        { class: 'jp-GpuEnv-createFile' },
        'From ',
        h('code', { title: options.file }, options.file)
      ),
      field(
        'Name of the new environment',
        this._name,
        "Letters, digits, '.', '_' and '-'; at most 64. Nothing is made " +
          'yet: the next step shows what it installs.'
      ),
      problem
    );
    liveValidate(this._name, problem, value =>
      envNameProblem(value, options.taken)
    );
    this._name.addEventListener('focus', () => this._name.select());
  }

  getValue(): string {
    return this._name.value;
  }

  private _name: HTMLInputElement;
}

export namespace CreateFromFileForm {
  export interface IOptions {
    /** The file, as the file browser shows its path. */
    file: string;
    /** The name proposed at first. */
    name: string;
    /** Names already listed (refused at once). */
    taken: string[];
    /** The server's message when it refused the previous try. */
    error?: string;
  }
}

/**
 * Asks what teammates should know about an environment shared with them
 * (required, one line) and, optionally, another name in the shared folder.
 */
export class PublishForm extends FormBody<IPublishRequest> {
  constructor(options: PublishForm.IOptions) {
    super();
    this._description = textInput({
      value: options.description ?? '',
      required: true,
      maxlength: MAX_DESCRIPTION_LENGTH,
      placeholder: 'CUDA 12 + PyTorch 2.4, for the training notebooks',
      'aria-describedby': 'jp-GpuEnv-publishDescriptionProblem',
      'data-testid': 'gpu-env-publish-description'
    });
    this._name = textInput({
      value: options.sharedName ?? '',
      maxlength: MAX_ENV_NAME_LENGTH,
      placeholder: options.name,
      'aria-describedby': 'jp-GpuEnv-publishNameProblem',
      'data-testid': 'gpu-env-publish-name'
    });
    const descriptionLine = problemLine(
      'jp-GpuEnv-publishDescriptionProblem',
      'gpu-env-publish-description-problem'
    );
    const nameProblem = problemLine(
      'jp-GpuEnv-publishNameProblem',
      'gpu-env-publish-name-problem'
    );
    this.node.append(
      field(
        'Description',
        this._description,
        'One line: what it holds and what it is for. Teammates see it ' +
          'under its name.'
      ),
      descriptionLine,
      field(
        'Name in the shared folder (optional)',
        this._name,
        `Empty: '${options.name}'. Teammates clone it to use it; only ` +
          'you can unpublish it.'
      ),
      nameProblem,
      // What the server said of the previous try (a name taken meanwhile).
      problemLine(
        'jp-GpuEnv-publishProblem',
        'gpu-env-publish-problem',
        options.error
      )
    );
    liveValidate(this._description, descriptionLine, descriptionProblem);
    const taken = (name: string): string | null =>
      options.taken.includes(name)
        ? `'${name}' is already shared: give it another name.`
        : null;
    const checkName = liveValidate(this._name, nameProblem, value =>
      value ? (envNameProblem(value) ?? taken(value)) : taken(options.name)
    );
    checkName();
  }

  getValue(): IPublishRequest {
    const name = this._name.value.trim();
    return {
      description: this._description.value.trim(),
      ...(name ? { name } : {})
    };
  }

  /**
   * The accept button waits for a description (a required field, empty at
   * first): the Dialog checks its fields on `input` events, listened to
   * once it is attached itself, just after its body.
   */
  protected override onAfterAttach(): void {
    queueMicrotask(() =>
      this._description.dispatchEvent(new Event('input', { bubbles: true }))
    );
  }

  private _description: HTMLInputElement;
  private _name: HTMLInputElement;
}

export namespace PublishForm {
  export interface IOptions {
    /** The environment shared; also the default shared name. */
    name: string;
    /** Names already in the shared folder (refused at once). */
    taken: string[];
    /** What the previous try said, kept when the server refused it. */
    description?: string;
    sharedName?: string;
    /** The server's message when it refused the previous try. */
    error?: string;
  }
}
