/**
 * The body of the "Send to batch" dialog: the notebook's parameters (one
 * value each, or several for a sweep), where it runs (kernel, environment or
 * image), the backend and its resources, and the job's name. `getValue()`
 * is the `POST jobs` request.
 */
import { Dialog } from '@jupyterlab/apputils';
import { Widget } from '@lumino/widgets';

import {
  checkedField,
  field,
  formSection,
  h,
  textInput,
  wholeNumberInput
} from '../../components/form';
import type {
  IBackendInfo,
  IGpuAdvice,
  IJob,
  IJobRequest,
  INotebookParameters
} from '../../api/types';
import { ParameterFields } from './param-fields';
import {
  CapacityLoader,
  ILastUsed,
  ResourceFields,
  ResourceKey
} from './resource-fields';
import { SWEEP_LIMIT, describeRuns } from '../sweeps/values';
import {
  ITargetChoices,
  offerImages,
  targetField,
  targetSelect
} from './target-select';
import { PriorityField } from './priority-field';
import { rerunName } from './rerun-values';
import { resourceProblem } from './resource-values';
import { AdviceLine } from '../../advice/line';
import { ISendPart } from '../tokens';

/** What the dialog offers; where the job may run is `ITargetChoices`. */
export interface ISubmitContext extends ITargetChoices {
  /** The notebook, relative to the server's root. */
  path: string;
  /** The server's reading of the `parameters` cell; null when it failed. */
  parameters: INotebookParameters | null;
  /** Why the parameters could not be read. */
  parametersError?: string;
  backends: IBackendInfo[];
  last: ILastUsed | null;
  /** What a backend could start now; not shown without it. */
  capacity?: CapacityLoader;
  /** Right-size advice for the notebook on a backend; no line without it. */
  advice?: (backend: string, signal: AbortSignal) => Promise<IGpuAdvice>;
  /**
   * "Run again…": the job whose snapshot runs (one run: no sweep mode,
   * its name follows its values), and the run target to start at.
   */
  rerun?: { job: IJob; target: string | null };
  /** Parts other features add ("Repeat", "Run after…"), after Run. */
  parts?: readonly ISendPart[];
}

/** Words in a server message that point at a field. */
const FIELD_HINTS: [RegExp, ResourceKey][] = [
  [/\bcpus\b|\bCPUs?\b/, 'cpus'],
  [/\bmemory\b/i, 'memory'],
  [/mig_profile|\bMIG\b/, 'mig_profile'],
  [/\bgpus\b|\bGPUs?\b/, 'gpus'],
  [/time_limit|time limit/i, 'time_limit'],
  [/\bqueue\b/i, 'queue']
];

export class SubmitForm
  extends Widget
  implements Dialog.IBodyWidget<IJobRequest>
{
  constructor(private readonly _context: ISubmitContext) {
    super({ node: h('form', { class: 'jp-GpuEnv-form' }) });
    this.addClass('jp-GpuEnv-submitForm');
    this.node.dataset.testid = 'gpu-env-submit-form';
    this.node.addEventListener('submit', event => event.preventDefault());
    const { path } = _context;
    this._params = new ParameterFields(
      _context.parameters,
      _context.parametersError
    );
    this._resources = new ResourceFields(
      _context.backends,
      _context.last,
      _context.capacity
    );
    this._sweepToggle = h('input', {
      type: 'checkbox',
      'data-testid': 'gpu-env-submit-sweep'
    });
    this._runs = h('span', {
      class: 'jp-GpuEnv-sweepRuns',
      role: 'status',
      'data-testid': 'gpu-env-submit-runs'
    });
    this._atOnce = wholeNumberInput({
      placeholder: 'all',
      'data-testid': 'gpu-env-submit-max-concurrent'
    });
    this._atOnceField = checkedField('Runs at once', this._atOnce, text =>
      resourceProblem('max_concurrent', text)
    );
    this._atOnceField.classList.add('jp-GpuEnv-sweepAtOnce');
    this._atOnceField.title =
      'How many runs may run at the same time (empty: as many as the ' +
      'backend allows)';
    this._sweepSummary = h(
      'div',
      { class: 'jp-GpuEnv-sweepSummary', hidden: true },
      this._runs,
      this._atOnceField
    );
    this._target = targetSelect(_context);
    const stem =
      path
        .split('/')
        .pop()
        ?.replace(/\.ipynb$/i, '') ?? path;
    this._name = textInput({
      placeholder: stem,
      maxlength: 200,
      'data-testid': 'gpu-env-submit-name'
    });
    this._error = h('div', {
      class: 'jp-GpuEnv-error jp-GpuEnv-submitError',
      role: 'alert',
      hidden: true,
      'data-testid': 'gpu-env-submit-error'
    });

    const { rerun } = _context;
    this._priority = new PriorityField(rerun?.job.priority);
    const resources = this._resources;
    const advise = _context.advice;
    this._advice = advise
      ? new AdviceLine({
          load: advise,
          fields: () => resources.gpuFields(),
          apply: suggestion => resources.useSuggestion(suggestion),
          switchBackend: name => resources.chooseBackend(name)
        })
      : null;
    this.parts = rerun ? [] : (_context.parts ?? []);
    if (rerun?.target) {
      this._target.value = rerun.target;
    }
    if (rerun) {
      // The old name with what changed, as the values are edited; a run of
      // a sweep is named by its values on the server.
      const follow = (): void => {
        this._name.placeholder = rerun.job.group_id
          ? 'named by its values'
          : rerunName(rerun.job.name, this._params.changed());
      };
      follow();
      this.node.addEventListener('input', follow);
      this.node.addEventListener('change', follow);
    }
    this.node.append(
      rerun
        ? h(
            'div',
            { class: 'jp-GpuEnv-fieldHint' },
            'Runs the snapshot of ',
            h('code', {}, path),
            ` that “${rerun.job.name}” ran, not the file as it is now. ` +
              'Its values are filled in: change what should differ.'
          )
        : h(
            'div',
            { class: 'jp-GpuEnv-fieldHint' },
            'Runs ',
            h('code', {}, path),
            ' as saved now: later edits do not change the job.'
          ),
      formSection(
        'Parameters',
        this._params.node,
        ...(rerun ? [] : this._sweepFields())
      ),
      formSection(
        'Run',
        field('Run in', this._target),
        h(
          'div',
          { class: 'jp-GpuEnv-formRow' },
          this._resources.backendField,
          field(rerun ? 'New job’s name' : 'Job name', this._name)
        ),
        this._resources.node,
        this._priority.node
      ),
      ...this.parts.map(part =>
        part.title ? formSection(part.title, part.node) : part.node
      ),
      this._error
    );
    if (this._advice) {
      this._resources.placeUnderFields(this._advice.node);
    }
    // A refusal is of what was sent: once a choice changes, it may no
    // longer hold (typing alone keeps it in view while it is fixed).
    this.node.addEventListener('change', () => this.clearError());
    this._resources.onBackendChanged = info => {
      this._priority.setBackend(info);
      this._advice?.ask(info?.name ?? '');
      offerImages(this._target, info?.supports_images ?? false);
      this.parts.forEach(part => part.setBackend?.(info ?? null));
    };
    this.parts.forEach(part => part.setBackend?.(this._resources.info ?? null));
    this._priority.setBackend(this._resources.info);
    this._advice?.ask(this._resources.backend.value);
    offerImages(this._target, this._resources.info?.supports_images ?? false);
    // A field the server complained about is marked until it changes.
    this.node.addEventListener('input', event => {
      (event.target as HTMLElement).classList?.remove('jp-GpuEnv-inputError');
      this._showRuns();
      this._advice?.refresh();
    });
    this.node.addEventListener('change', () => {
      this._showRuns();
      this._advice?.refresh();
    });
  }

  /** The sweep mode's switch, and its run count and "runs at once". */
  private _sweepFields(): HTMLElement[] {
    if (!this._params.hasFields) {
      return [];
    }
    const toggle = h(
      'label',
      {
        class: 'jp-GpuEnv-sweepToggle',
        title:
          'Run the notebook once per combination of the values: type a ' +
          'list (1, 2, 3) or a range (0:1:0.25) in any field'
      },
      this._sweepToggle,
      'Several values per parameter (a sweep)'
    );
    this._sweepToggle.addEventListener('change', () => {
      this._params.sweep = this._sweepToggle.checked;
      this._sweepSummary.hidden = !this._sweepToggle.checked;
      this.parts.forEach(part => part.setSweep?.(this._sweepToggle.checked));
      this._showRuns();
    });
    return [toggle, this._sweepSummary];
  }

  /** The number of runs, as typed so far. */
  private _showRuns(): void {
    if (!this._params.sweep) {
      return;
    }
    let count: number | null = null;
    try {
      count = this._params.sweepValues().count;
    } catch {
      // The field says what is wrong.
    }
    this._atOnceField.hidden = count === null || count < 2;
    this._atOnce.disabled = this._atOnceField.hidden;
    const atOnce = Number.parseInt(this._atOnce.value, 10);
    const over = count !== null && count > SWEEP_LIMIT;
    this._runs.dataset.level = over ? 'warn' : count === null ? 'error' : '';
    this._runs.dataset.count = String(count ?? '');
    this._runs.textContent =
      count === null
        ? 'Runs: correct the values above to count them'
        : describeRuns(count, atOnce > 0 ? atOnce : null) +
          (over
            ? ` — the server usually takes at most ${SWEEP_LIMIT.toLocaleString('en-US')} in one sweep`
            : '');
  }

  /** The parts other features added (none for "Run again…"). */
  readonly parts: readonly ISendPart[];

  override dispose(): void {
    this.parts.forEach(part => part.dispose());
    this._advice?.dispose();
    super.dispose();
  }

  getValue(): IJobRequest {
    const request: IJobRequest = {
      notebook_path: this._context.path,
      backend: this._resources.backend.value,
      parameters: this._params.changed(),
      resources: this._resources.resources(),
      priority: this._priority.value()
    };
    if (this._params.sweep) {
      const { fixed, swept, count } = this._params.sweepValues();
      request.parameters = fixed;
      if (count > 1) {
        request.sweep = swept;
        const atOnce = Number.parseInt(this._atOnce.value, 10);
        if (atOnce > 0) {
          request.max_concurrent = atOnce;
        }
      }
    }
    Object.assign(request, targetField(this._target.value));
    const queue = this._resources.queue();
    if (queue) {
      request.queue = queue;
    }
    const rerun = this._context.rerun?.job;
    const name =
      this._name.value.trim() ||
      (rerun && !rerun.group_id ? this._name.placeholder : '');
    if (name && name !== rerun?.name) {
      request.name = name;
    }
    return request;
  }

  /** Show the server's refusal, keeping everything typed. */
  showError(message: string): void {
    message = message.replace(/Value error, /g, '');
    this._error.textContent = message;
    this._error.hidden = false;
    for (const [pattern, key] of FIELD_HINTS) {
      const input = this._resources.inputs[key];
      input.classList.toggle('jp-GpuEnv-inputError', pattern.test(message));
    }
    this._params.markErrors(message);
    this._error.scrollIntoView({ block: 'nearest' });
  }

  clearError(): void {
    this._error.hidden = true;
    this._error.textContent = '';
  }

  private _params: ParameterFields;
  private _sweepToggle: HTMLInputElement;
  private _sweepSummary: HTMLDivElement;
  private _runs: HTMLSpanElement;
  private _atOnce: HTMLInputElement;
  private _atOnceField: HTMLDivElement;
  private _resources: ResourceFields;
  private _priority: PriorityField;
  private _advice: AdviceLine | null;
  private _target: HTMLSelectElement;
  private _name: HTMLInputElement;
  private _error: HTMLDivElement;
}
