/**
 * The bodies of the Dask dialogs: the workers fields (a number, or adaptive
 * bounds), shared by "New cluster…" and "Scale…", and the new cluster's
 * form: what to run in (prefilled with the notebook's kernel), the backend
 * and each worker's resources as the send dialog offers them, the workers.
 */
import {
  FormBody,
  field,
  formSection,
  h,
  select,
  textInput
} from '../components/form';
import type {
  IBackendInfo,
  IDaskClusterRequest,
  IDaskScaleRequest
} from '../api/types';
import {
  ILastUsed,
  ResourceFields,
  ResourceKey
} from '../jobs/submit/resource-fields';
import {
  ITargetChoices,
  targetField,
  targetGroups
} from '../jobs/submit/target-select';
import { IWorkerTexts, readWorkers } from './format';

/** A fixed number of workers, or adaptive minimum and maximum. */
export class WorkerFields {
  constructor(texts: IWorkerTexts) {
    const number = (testid: string, value: string, min: number) =>
      h('input', {
        type: 'number',
        class: 'jp-mod-styled',
        min,
        step: 1,
        value,
        'data-testid': testid
      });
    this._adaptive = h('input', {
      type: 'checkbox',
      'data-testid': 'gpu-env-dask-adaptive'
    });
    this._adaptive.checked = texts.adaptive;
    this._workers = number('gpu-env-dask-workers', texts.workers, 0);
    this._minimum = number('gpu-env-dask-minimum', texts.minimum, 0);
    this._maximum = number('gpu-env-dask-maximum', texts.maximum, 1);
    this._fixed = field(
      'Workers',
      this._workers,
      'Each worker is a batch job; 0 keeps the scheduler alone.'
    );
    // A grid's display would override `hidden`: hidden is its wrapper.
    this._bounds = h(
      'div',
      {},
      h(
        'div',
        { class: 'jp-GpuEnv-resourceGrid' },
        field('Minimum', this._minimum, 'Kept even when idle.'),
        field('Maximum', this._maximum, 'Asked for at most.')
      )
    );
    this.node = h(
      'div',
      { class: 'jp-GpuEnv-daskWorkers' },
      h(
        'label',
        { class: 'jp-GpuEnv-check' },
        this._adaptive,
        ' Adaptive: as many workers as the work needs'
      ),
      this._fixed,
      this._bounds
    );
    this._adaptive.addEventListener('change', () => this._sync());
    this._sync();
  }

  readonly node: HTMLDivElement;

  /** The fields as typed. */
  texts(): IWorkerTexts {
    return {
      adaptive: this._adaptive.checked,
      workers: this._workers.value,
      minimum: this._minimum.value,
      maximum: this._maximum.value
    };
  }

  /** `{workers}` or `{adapt}`; throws an Error saying what is wrong. */
  value(): IDaskScaleRequest {
    return readWorkers(this.texts());
  }

  private _sync(): void {
    this._fixed.hidden = this._adaptive.checked;
    this._bounds.hidden = !this._adaptive.checked;
  }

  private _adaptive: HTMLInputElement;
  private _workers: HTMLInputElement;
  private _minimum: HTMLInputElement;
  private _maximum: HTMLInputElement;
  private _fixed: HTMLDivElement;
  private _bounds: HTMLDivElement;
}

/** A form whose dialog shows the server's refusal in it. */
export abstract class DaskFormBody<T> extends FormBody<T> {
  constructor() {
    super();
    this.error = h('div', {
      class: 'jp-GpuEnv-error jp-GpuEnv-submitError',
      role: 'alert',
      hidden: true,
      'data-testid': 'gpu-env-dask-error'
    });
    this.addClass('jp-GpuEnv-daskForm');
  }

  /** Where a refusal shows, with what the user can do about it. */
  readonly error: HTMLDivElement;

  showError(message: string, ...actions: HTMLElement[]): void {
    this.error.replaceChildren(
      h('div', {}, message.replace(/Value error, /g, '')),
      ...actions
    );
    this.error.hidden = false;
    this.error.scrollIntoView({ block: 'nearest' });
  }

  clearError(): void {
    this.error.hidden = true;
    this.error.replaceChildren();
  }
}

/** The new-cluster form as typed, to open it again with the same. */
export interface IClusterTyped {
  target: string;
  name: string;
  backend: string;
  /** The resource inputs' texts (the queue's too), by field. */
  resources: Partial<Record<ResourceKey, string>>;
  workers: IWorkerTexts;
}

/** What the new-cluster form offers (the active notebook's kernel first). */
export interface IClusterChoices extends ITargetChoices {
  backends: IBackendInfo[];
  last: ILastUsed | null;
  /** What was typed in it before (it was closed to add packages). */
  typed?: IClusterTyped;
}

/** "New cluster…": where it runs, its workers and what each asks for. */
export class ClusterForm extends DaskFormBody<IDaskClusterRequest> {
  constructor(choices: IClusterChoices) {
    super();
    this._target = targetSelect(choices);
    this._name = textInput({
      placeholder: 'the environment’s name',
      maxlength: 100,
      'data-testid': 'gpu-env-dask-name'
    });
    const { typed } = choices;
    this._resources = new ResourceFields(
      choices.backends,
      typed ? { backend: typed.backend } : choices.last
    );
    this.workers = new WorkerFields(
      typed?.workers ?? {
        adaptive: false,
        workers: '1',
        minimum: '0',
        maximum: '4'
      }
    );
    if (typed) {
      this._retype(typed);
    }
    // The send dialog's time limit is each worker's here.
    const timeLimit = this._resources.inputs.time_limit;
    const label = timeLimit.closest('.jp-GpuEnv-field')?.querySelector('label');
    if (label) {
      label.title =
        'How long each worker may run. A cluster of a fixed size that fits ' +
        'one node of a SLURM queue starts as one allocation and ends then; ' +
        'otherwise workers retire a few minutes before it, staggered, and ' +
        'are replaced';
    }
    this.node.append(
      field(
        'Run in',
        this._target,
        'Scheduler and workers run this Python, so versions match the notebook’s.'
      ),
      this._resources.backendField,
      formSection('Workers', this.workers.node),
      formSection('Each worker', this._resources.node),
      field('Name', this._name, 'Shown in the list and the usage ledger.'),
      this.error
    );
  }

  readonly workers: WorkerFields;

  /** The backend, queue and resources chosen (remembered for next time). */
  lastUsed(): ILastUsed {
    return {
      backend: this._resources.backend.value,
      queue: this._resources.queue(),
      resources: this._resources.resources()
    };
  }

  /** Everything as typed, valid or not. */
  typed(): IClusterTyped {
    const resources: Partial<Record<ResourceKey, string>> = {};
    for (const [key, input] of Object.entries(this._resources.inputs)) {
      resources[key as ResourceKey] = input.value;
    }
    return {
      target: this._target.value,
      name: this._name.value,
      backend: this._resources.backend.value,
      resources,
      workers: this.workers.texts()
    };
  }

  /** The request; throws an Error saying what is wrong. */
  getValue(): IDaskClusterRequest {
    const resources = this._resources.resources();
    const request: IDaskClusterRequest = {
      backend: this._resources.backend.value,
      resources,
      ...this.workers.value()
    };
    Object.assign(request, targetField(this._target.value));
    const name = this._name.value.trim();
    if (name) {
      request.name = name;
    }
    const queue = this._resources.queue();
    if (queue) {
      request.queue = queue;
    }
    return request;
  }

  /** Fill in what was typed before; options no longer offered stay. */
  private _retype(typed: IClusterTyped): void {
    const offered = (node: HTMLSelectElement, value: string) =>
      Array.from(node.options).some(o => o.value === value);
    if (offered(this._target, typed.target)) {
      this._target.value = typed.target;
    }
    this._name.value = typed.name;
    for (const [key, input] of Object.entries(this._resources.inputs)) {
      const value = typed.resources[key as ResourceKey];
      if (
        value === undefined ||
        (input instanceof HTMLSelectElement && !offered(input, value))
      ) {
        continue;
      }
      input.value = value;
      // The GPU fields follow the MIG slice chosen.
      input.dispatchEvent(new Event('change', { bubbles: true }));
    }
  }

  private _target: HTMLSelectElement;
  private _name: HTMLInputElement;
  private _resources: ResourceFields;
}

/** Kernels (the notebook's first), conda environments, packed images. */
function targetSelect(choices: IClusterChoices): HTMLSelectElement {
  const { kernels, kernel } = choices;
  const node = select([], undefined, { 'data-testid': 'gpu-env-dask-target' });
  // Scheduler and workers run an environment's Python, not a kernel: one
  // without ipykernel will do.
  node.append(...targetGroups(choices, false));
  const known = kernels.some(k => k.name === kernel);
  node.value =
    kernel && known
      ? `kernel:${kernel}`
      : kernels.length
        ? `kernel:${kernels[0].name}`
        : (node.querySelector('option')?.value ?? '');
  return node;
}
