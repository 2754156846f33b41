/**
 * The bodies of the Environments dialogs (clone, pack, packages, export):
 * Lumino widgets whose `getValue()` gives what the user chose.
 */
import {
  FormBody,
  field,
  h,
  liveValidate,
  select,
  textInput
} from '../components/form';
import {
  Compression,
  ExportFormat,
  IImageRequest,
  IPackage,
  ImageFormat
} from '../api/types';
import {
  envNameProblem,
  parseRequirements,
  parseSpecs,
  suggestCloneName
} from './format';
import { SearchFn, Suggestions } from './suggest';

/**
 * The environment a form is about: chosen in a select when there are
 * several (appended to the form under `label`), else the one given.
 */
class EnvironmentChoice {
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

export interface IPackValue extends IImageRequest {
  environment: string;
}

const COMPRESSIONS: [Compression, string][] = [
  ['zstd', 'zstd — fast to pack and to read (default)'],
  ['xz', 'xz — smaller, slower; mounts on older kernels'],
  ['none', 'none — largest, fastest to read']
];

const FORMATS: [ImageFormat, string][] = [
  ['squashfs', 'squashfs — one file, mountable by Apptainer or squashfuse'],
  ['sif', 'SIF — an Apptainer container (needs apptainer on the server)']
];

/** Asks the image's format and compression (and the environment). */
export class PackForm extends FormBody<IPackValue> {
  constructor(options: { environments: string[]; environment: string }) {
    super();
    this._env = new EnvironmentChoice(this, 'Environment', {
      names: options.environments,
      selected: options.environment,
      testid: 'gpu-env-pack-environment'
    });
    this._format = select(FORMATS, 'squashfs');
    this._compression = select(COMPRESSIONS, 'zstd', {
      'data-testid': 'gpu-env-pack-compression'
    });
    this.node.append(
      field('Format', this._format),
      field(
        'Compression',
        this._compression,
        'Thousands of small files become one file: fast to open from ' +
          'shared filesystems and ready for batch jobs.'
      )
    );
  }

  getValue(): IPackValue {
    return {
      environment: this._env.value,
      format: this._format.value as ImageFormat,
      compression: this._compression.value as Compression
    };
  }

  private _env: EnvironmentChoice;
  private _format: HTMLSelectElement;
  private _compression: HTMLSelectElement;
}

export interface IPackagesValue {
  add: string[];
  remove: string[];
  pip_add: string[];
  pip_remove: string[];
}

/**
 * Conda specs and PyPI requirements to add, and checkboxes of the installed
 * packages to remove (conda ones and those installed with pip, apart).
 */
export class PackagesForm extends FormBody<IPackagesValue> {
  constructor(packages: IPackage[], search?: SearchFn) {
    super();
    this._add = textInput({
      placeholder: 'tensorboard, numpy >=1.26',
      'data-testid': 'gpu-env-packages-add'
    });
    this._pipAdd = textInput({
      placeholder: 'transformers, requests >=2.31',
      'data-testid': 'gpu-env-packages-pip-add'
    });
    const suggest = (input: HTMLInputElement, kind: 'conda' | 'pypi') =>
      search ? new Suggestions(input, kind, search).node : null;
    this.node.append(
      field(
        'Add conda packages',
        this._add,
        "Conda specs, separated by commas or spaces; solved against the server's channels."
      ),
      ...[suggest(this._add, 'conda')].filter(n => n !== null),
      field(
        'Add PyPI packages',
        this._pipAdd,
        'Requirements for pip, installed after the conda ones with this ' +
          "environment's Python. Prefer conda where a package exists there."
      ),
      ...[suggest(this._pipAdd, 'pypi')].filter(n => n !== null)
    );
    this._conda = this._checkList(packages, 'conda', 'gpu-env-packages-remove');
    this._pypi = this._checkList(
      packages,
      'pypi',
      'gpu-env-packages-pip-remove'
    );
    this.node.append(
      h(
        'div',
        { class: 'jp-GpuEnv-fieldHint' },
        'Nothing changes yet: the next step shows the plan, including packages ' +
          'removed along with the ones you pick.'
      )
    );
  }

  getValue(): IPackagesValue {
    const checked = (boxes: HTMLInputElement[]) =>
      boxes.filter(b => b.checked).map(b => b.value);
    return {
      add: parseSpecs(this._add.value),
      remove: checked(this._conda),
      pip_add: parseRequirements(this._pipAdd.value),
      pip_remove: checked(this._pypi)
    };
  }

  private _checkList(
    packages: IPackage[],
    kind: IPackage['kind'],
    testid: string
  ): HTMLInputElement[] {
    const chosen = packages.filter(p => p.kind === kind);
    const boxes: HTMLInputElement[] = [];
    if (chosen.length === 0) {
      return boxes;
    }
    const list = h('ul', {
      class: 'jp-GpuEnv-checkList',
      'data-testid': testid
    });
    for (const pkg of chosen) {
      const box = h('input', { type: 'checkbox', value: pkg.name });
      boxes.push(box);
      list.append(
        h(
          'li',
          {},
          h(
            'label',
            {},
            box,
            h('span', { class: 'jp-GpuEnv-pkgName' }, pkg.name),
            h('span', { class: 'jp-GpuEnv-pkgVersion' }, pkg.version)
          )
        )
      );
    }
    const label =
      kind === 'conda' ? 'Remove conda packages' : 'Remove PyPI packages';
    this.node.append(h('div', { class: 'jp-GpuEnv-fieldLabel' }, label), list);
    return boxes;
  }

  private _add: HTMLInputElement;
  private _pipAdd: HTMLInputElement;
  private _conda: HTMLInputElement[];
  private _pypi: HTMLInputElement[];
}

/** Asks which export to download. */
export class ExportForm extends FormBody<ExportFormat> {
  constructor() {
    super();
    const choices: [ExportFormat, string, string][] = [
      [
        'yaml',
        'environment.yml',
        'Package names and versions: rebuild it with conda env create.'
      ],
      [
        'explicit',
        'Explicit lock',
        'Exact package URLs and hashes: the same environment, bit for bit.'
      ]
    ];
    for (const [value, label, hint] of choices) {
      const radio = h('input', {
        type: 'radio',
        name: 'jp-GpuEnv-exportFormat',
        value,
        checked: value === 'yaml'
      });
      this._radios.push(radio);
      this.node.append(
        h(
          'label',
          { class: 'jp-GpuEnv-choice' },
          radio,
          h(
            'span',
            {},
            h('strong', {}, label),
            h('span', { class: 'jp-GpuEnv-fieldHint' }, hint)
          )
        )
      );
    }
  }

  getValue(): ExportFormat {
    const checked = this._radios.find(r => r.checked);
    return (checked?.value ?? 'yaml') as ExportFormat;
  }

  private _radios: HTMLInputElement[] = [];
}
