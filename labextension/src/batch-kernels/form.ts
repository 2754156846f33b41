/**
 * The body of "Kernel on the batch system…": what the kernel runs in (the
 * environment of the row it was asked from, else chosen here), the backend
 * and its resources as the send dialog offers them (its fields, checked as
 * typed; the time limit is the kernel's walltime), the priority where the
 * backend offers one, and the name the Launcher shows. A refusal shows in
 * it with everything typed kept.
 */
import {
  FormBody,
  field,
  formSection,
  h,
  select,
  textInput
} from '../components/form';
import type { IBackendInfo, IBatchKernelRequest } from '../api/types';
import { PriorityField } from '../jobs/submit/priority-field';
import {
  CapacityLoader,
  ILastUsed,
  ResourceFields
} from '../jobs/submit/resource-fields';
import {
  ITargetChoices,
  offerImages,
  targetGroups
} from '../jobs/submit/target-select';
import { batchKernelRequest, defaultTarget } from './values';

/** What the dialog offers. */
export interface IBatchKernelChoices extends ITargetChoices {
  /** The environment it was asked for (an environment row's menu). */
  environment: string | null;
  backends: IBackendInfo[];
  last: ILastUsed | null;
  capacity?: CapacityLoader;
}

export class BatchKernelForm extends FormBody<IBatchKernelRequest> {
  constructor(choices: IBatchKernelChoices) {
    super();
    this.addClass('jp-GpuEnv-batchKernelForm');
    this.node.dataset.testid = 'gpu-env-batch-kernel-form';
    this._target = select([], undefined, {
      'data-testid': 'gpu-env-batch-kernel-target'
    });
    this._target.append(...targetGroups(choices, true));
    this._target.value = defaultTarget(choices);
    this._resources = new ResourceFields(
      choices.backends,
      choices.last,
      choices.capacity
    );
    this._priority = new PriorityField('normal', {
      opportunistic:
        'Runs while GPUs are free, and is stopped when a normal job needs its ' +
        'GPU: the kernel then ends, with its variables (an interactive kernel ' +
        'is not resumed elsewhere). Save your work as you go.'
    });
    this._name = textInput({
      placeholder: 'what it runs in and where',
      maxlength: 120,
      'data-testid': 'gpu-env-batch-kernel-name'
    });
    this._error = h('div', {
      class: 'jp-GpuEnv-error jp-GpuEnv-submitError',
      role: 'alert',
      hidden: true,
      'data-testid': 'gpu-env-batch-kernel-error'
    });
    // The send dialog's time limit is the kernel's walltime here.
    const walltime = this._resources.inputs.time_limit;
    walltime.setAttribute('placeholder', 'the site’s default');
    const label = walltime.closest('.jp-GpuEnv-field')?.querySelector('label');
    if (label) {
      label.textContent = 'Walltime';
      label.title =
        'How long the kernel may run once started; the notebook is told ' +
        'ten minutes before it ends';
    }
    this.node.append(
      h(
        'div',
        { class: 'jp-GpuEnv-fieldHint' },
        'A kernel of its own in the Launcher: a notebook started with it ' +
          'waits while its job queues, then runs on the node the job gets.'
      ),
      formSection(
        'Kernel',
        field('Run in', this._target),
        h(
          'div',
          { class: 'jp-GpuEnv-formRow' },
          this._resources.backendField,
          field('Name in the Launcher', this._name)
        )
      ),
      formSection('Resources', this._resources.node, this._priority.node),
      this._error
    );
    const backendChanged = (info: IBackendInfo | undefined): void => {
      this._priority.setBackend(info);
      offerImages(this._target, info?.supports_images ?? false);
    };
    this._resources.onBackendChanged = backendChanged;
    backendChanged(this._resources.info);
    // A refusal is of what was sent: a new choice may have settled it.
    this.node.addEventListener('change', () => this.clearError());
  }

  /** The backend, queue and resources chosen (remembered for next time). */
  lastUsed(): ILastUsed {
    return {
      backend: this._resources.backend.value,
      queue: this._resources.queue(),
      resources: this._resources.resources()
    };
  }

  /** The request; throws an Error saying what is wrong. */
  getValue(): IBatchKernelRequest {
    return batchKernelRequest({
      target: this._target.value,
      backend: this._resources.backend.value,
      resources: this._resources.resources(),
      queue: this._resources.queue(),
      priority: this._priority.value(),
      displayName: this._name.value
    });
  }

  /** Show the server's refusal; what was typed stays. */
  showError(message: string): void {
    this._error.textContent = message.replace(/Value error, /g, '');
    this._error.hidden = false;
    this._error.scrollIntoView({ block: 'nearest' });
  }

  clearError(): void {
    this._error.hidden = true;
    this._error.textContent = '';
  }

  private _target: HTMLSelectElement;
  private _resources: ResourceFields;
  private _priority: PriorityField;
  private _name: HTMLInputElement;
  private _error: HTMLDivElement;
}
