/**
 * The backend, queue and resources part of the submit dialog. It offers only
 * what the chosen backend supports: no GPU input without GPUs, MIG profiles
 * only where the backend lists some, queues only where there are queues.
 * Limits show as hints; the server checks them and says what is wrong.
 */
import {
  checkedField,
  field,
  h,
  select,
  textInput,
  wholeNumberInput
} from '../../components/form';
import { formatBytes } from '../../components/format';
import { formatClock } from '../format';
import {
  describeCapacity,
  freeByProfile,
  profileLabel,
  readResources,
  resourceProblem
} from './resource-values';
import { messageOf } from '../../api/request';
import type {
  IBackendInfo,
  IClusterCapacity,
  ICapacityRow,
  IResourceRequest,
  ISuggestedResources
} from '../../api/types';
import { IGpuFields, fieldsFor } from '../../advice/values';

/** Asks what a backend could start now (`GET backends/{name}/capacity`). */
export type CapacityLoader = (backend: string) => Promise<IClusterCapacity>;

/** What the dialog remembers between submissions (in the state database). */
export interface ILastUsed {
  backend?: string;
  queue?: string;
  resources?: IResourceRequest;
}

/** Field keys, as the server names them in its messages. */
export type ResourceKey =
  'cpus' | 'memory' | 'gpus' | 'mig_profile' | 'time_limit' | 'queue';

export class ResourceFields {
  constructor(
    backends: IBackendInfo[],
    last: ILastUsed | null,
    capacity?: CapacityLoader
  ) {
    this._backends = backends;
    this._loadCapacity = capacity ?? null;
    const remembered = backends.find(b => b.name === last?.backend);
    const initial = remembered ?? backends[0];
    this.backend = select(
      backends.map(b => [
        b.name,
        b.name === b.kind ? b.name : `${b.name} (${b.kind})`
      ]),
      initial?.name,
      { 'data-testid': 'gpu-env-submit-backend' }
    );
    this._queue = select([], undefined, {
      'data-testid': 'gpu-env-submit-queue'
    });
    const typed = (testid: string, placeholder: string, whole = false) =>
      (whole ? wholeNumberInput : textInput)({
        placeholder,
        'data-testid': `gpu-env-submit-${testid}`
      });
    const cpus = typed('cpus', 'default', true);
    const memory = typed('memory', 'e.g. 4G');
    const gpus = typed('gpus', '0', true);
    const time = typed('time-limit', 'e.g. 1:00:00');
    const mig = this._mig;
    const queue = this._queue;
    this.inputs = {
      cpus,
      memory,
      gpus,
      mig_profile: mig,
      time_limit: time,
      queue
    };
    const fields = {
      cpus: checkedField('CPUs', cpus, problemOf('cpus')),
      memory: checkedField('Memory', memory, problemOf('memory')),
      gpus: checkedField('GPUs', gpus, problemOf('gpus')),
      mig_profile: field('MIG slice', mig),
      time_limit: checkedField('Time limit', time, problemOf('time_limit'))
    };
    this._fields = fields;
    this._queueField = field('Queue', this._queue);
    this.backendField = field('Backend', this.backend);
    this.node = h(
      'div',
      { class: 'jp-GpuEnv-resources' },
      h(
        'div',
        { class: 'jp-GpuEnv-resourceGrid' },
        fields.cpus,
        fields.memory,
        fields.time_limit,
        fields.gpus,
        fields.mig_profile,
        this._queueField
      ),
      this._capacity,
      this._notes
    );
    this._mig.addEventListener('change', () => this._syncGpus());
    this.backend.addEventListener('change', () => this._apply());
    this._apply(last);
  }

  /** The resource inputs and the backend's notes. */
  readonly node: HTMLDivElement;
  /** The backend select, labelled (placed by the form). */
  readonly backendField: HTMLDivElement;
  readonly backend: HTMLSelectElement;
  readonly inputs: Record<ResourceKey, HTMLInputElement | HTMLSelectElement>;

  /** The backend chosen now. */
  get info(): IBackendInfo | undefined {
    return this._backends.find(b => b.name === this.backend.value);
  }

  /** Called after the backend changed (the run target depends on it). */
  onBackendChanged: (info: IBackendInfo | undefined) => void = () => undefined;

  /** The resources asked for; empty fields are left to the backend. */
  resources(): IResourceRequest {
    const { cpus, memory, gpus, time_limit } = this.inputs;
    return readResources(
      {
        cpus: cpus.value,
        memory: memory.value,
        gpus: gpus.value,
        time_limit: time_limit.value,
        mig_profile: this._mig.value
      },
      { gpus: this._gpusOffered(), mig: this._migOffered() }
    );
  }

  /** The GPU fields as typed (the advice compares its suggestion). */
  gpuFields(): IGpuFields {
    return { gpus: this.inputs.gpus.value, mig_profile: this._mig.value };
  }

  /** Fill the GPU fields with a suggestion: a MIG slice or whole GPUs. */
  useSuggestion(suggestion: ISuggestedResources): void {
    const fields = fieldsFor(suggestion);
    const offered = Array.from(this._mig.options).map(o => o.value);
    this._mig.value = offered.includes(fields.mig_profile)
      ? fields.mig_profile
      : '';
    this.inputs.gpus.value = fields.gpus;
    this._syncGpus();
    this.inputs.gpus.dispatchEvent(new Event('change', { bubbles: true }));
  }

  /** Put `node` right under the resource fields (above what is free). */
  placeUnderFields(node: HTMLElement): void {
    this.node.firstElementChild?.after(node);
  }

  /** Choose another backend, as if picked in its select. */
  chooseBackend(name: string): void {
    if (this._backends.some(b => b.name === name)) {
      this.backend.value = name;
      this.backend.dispatchEvent(new Event('change', { bubbles: true }));
    }
  }

  /** The queue chosen, or undefined for the backend's default. */
  queue(): string | undefined {
    return this._queue.value || undefined;
  }

  private _gpusOffered(): boolean {
    return this.info?.supports_gpus ?? false;
  }

  private _migOffered(): boolean {
    return (this.info?.mig_profiles.length ?? 0) > 0;
  }

  /** Show what the backend offers; prefill from `last` the first time. */
  private _apply(last?: ILastUsed | null): void {
    const info = this.info;
    const limits = info?.limits;
    const queues = info?.queues ?? [];
    const defaultLabel = info?.default_queue
      ? `Default (${info.default_queue})`
      : 'Default';
    this._queue.replaceChildren(
      ...[['', defaultLabel], ...queues.map(q => [q, q])].map(([v, l]) =>
        h('option', { value: v }, l)
      )
    );
    this._queue.value = queues.includes(last?.queue ?? '')
      ? (last?.queue ?? '')
      : '';
    this._queueField.hidden = queues.length === 0;

    const profiles = info?.mig_profiles ?? [];
    this._mig.replaceChildren(
      h('option', { value: '' }, 'None (whole GPUs)'),
      ...profiles.map(p => h('option', { value: p }, p))
    );
    this._fields.gpus.hidden = !this._gpusOffered();
    this._fields.mig_profile.hidden = profiles.length === 0;

    if (last?.resources) {
      const r = last.resources;
      this.inputs.cpus.value = r.cpus?.toString() ?? '';
      this.inputs.memory.value = r.memory?.toString() ?? '';
      this.inputs.gpus.value = r.gpus?.toString() ?? '';
      this.inputs.time_limit.value = r.time_limit?.toString() ?? '';
      if (r.mig_profile && profiles.includes(r.mig_profile)) {
        this._mig.value = r.mig_profile;
      }
    }
    setHint(this._fields.cpus, limits?.max_cpus, n => `At most ${n}.`);
    setHint(
      this._fields.memory,
      limits?.max_memory_bytes,
      n => `At most ${formatBytes(n)}.`
    );
    setHint(this._fields.gpus, limits?.max_gpus, n => `At most ${n}.`);
    setHint(
      this._fields.time_limit,
      limits?.max_time_limit_seconds,
      n => `At most ${formatClock(n)}.`
    );
    const notes = [...(info?.notes ?? [])];
    this._notes.replaceChildren(...notes.map(note => h('li', {}, note)));
    this._notes.hidden = notes.length === 0;
    this._syncGpus();
    void this._showCapacity(info);
    this.onBackendChanged(info);
  }

  /** What the backend could start now, beside the GPU and MIG choice. */
  private async _showCapacity(info: IBackendInfo | undefined): Promise<void> {
    const token = ++this._capacityToken;
    const node = this._capacity;
    const offered =
      !!info && (info.supports_gpus || info.mig_profiles.length > 0);
    this._markProfiles([]);
    if (!offered || !this._loadCapacity || !info) {
      node.replaceChildren();
      node.hidden = true;
      delete node.dataset.state;
      return;
    }
    node.hidden = false;
    node.dataset.state = 'loading';
    node.replaceChildren(
      h('span', { class: 'jp-GpuEnv-note' }, 'Looking for free GPUs…')
    );
    let answer: IClusterCapacity;
    try {
      answer = await this._loadCapacity(info.name);
    } catch (error) {
      if (token === this._capacityToken) {
        node.dataset.state = 'error';
        node.replaceChildren(
          h(
            'span',
            { class: 'jp-GpuEnv-note' },
            `Cannot tell what is free: ${messageOf(error)}`
          )
        );
      }
      return;
    }
    if (token !== this._capacityToken) {
      return;
    }
    if (!answer.available) {
      node.dataset.state = 'unavailable';
      node.replaceChildren(
        h(
          'span',
          {
            class: 'jp-GpuEnv-note',
            'data-testid': 'gpu-env-capacity-message'
          },
          answer.message || 'What is free cannot be read for this backend.'
        )
      );
      return;
    }
    node.dataset.state = 'ready';
    const rows = [...answer.rows].sort(
      (a, b) =>
        Number(a.profile === null) - Number(b.profile === null) ||
        (a.profile ?? a.gpu_model).localeCompare(b.profile ?? b.gpu_model)
    );
    const when = answer.read_at
      ? ` (read ${new Date(answer.read_at * 1000).toLocaleTimeString()})`
      : '';
    node.replaceChildren(
      h('span', { class: 'jp-GpuEnv-capacityLabel' }, 'Free now:'),
      ...(rows.length
        ? rows.map(row =>
            h(
              'span',
              {
                class: 'jp-GpuEnv-capacityRow',
                'data-testid': 'gpu-env-capacity-row',
                'data-profile': row.profile ?? '',
                'data-free': String(row.free),
                title:
                  `${row.resource} on ${row.nodes} ` +
                  `node${row.nodes === 1 ? '' : 's'}: ${row.used} in use` +
                  (row.free === 0 ? '; a job asking for it queues' : '') +
                  when
              },
              describeCapacity(row)
            )
          )
        : [h('span', { class: 'jp-GpuEnv-note' }, 'no GPUs found')])
    );
    this._markProfiles(rows);
  }

  /** Say on each MIG option how many are free; mark those with none. */
  private _markProfiles(rows: ICapacityRow[]): void {
    const free = freeByProfile(rows);
    for (const option of Array.from(this._mig.options)) {
      if (!option.value) {
        continue;
      }
      const n = free.get(option.value);
      option.textContent = profileLabel(option.value, n);
      if (n === undefined) {
        delete option.dataset.free;
      } else {
        option.dataset.free = String(n);
      }
    }
  }

  /** Whole GPUs or a MIG slice, not both. */
  private _syncGpus(): void {
    // A field not offered is not checked either (its leftover text waits).
    this.inputs.gpus.disabled = this._mig.value !== '' || !this._gpusOffered();
  }

  private _backends: IBackendInfo[];
  private _queue: HTMLSelectElement;
  private _queueField: HTMLElement;
  private _mig = select([], undefined, {
    'data-testid': 'gpu-env-submit-mig'
  });
  private _fields: Record<Exclude<ResourceKey, 'queue'>, HTMLElement>;
  private _loadCapacity: CapacityLoader | null;
  private _capacityToken = 0;
  private _capacity = h('div', {
    class: 'jp-GpuEnv-capacity',
    role: 'status',
    'data-testid': 'gpu-env-submit-capacity'
  });
  private _notes = h('ul', {
    class: 'jp-GpuEnv-backendNotes jp-GpuEnv-note',
    'data-testid': 'gpu-env-submit-notes'
  });
}

/** The check of one resource field, as typed. */
function problemOf(
  key: Parameters<typeof resourceProblem>[0]
): (text: string) => string | null {
  return text => resourceProblem(key, text);
}

/** Put (or replace) the hint under a field. */
function setHint(
  node: HTMLElement,
  value: number | null | undefined,
  text: (value: number) => string
): void {
  let hint = node.querySelector<HTMLElement>('.jp-GpuEnv-fieldHint');
  if (!hint) {
    hint = h('div', { class: 'jp-GpuEnv-fieldHint' });
    node.append(hint);
  }
  hint.textContent = value ? text(value) : '';
  hint.hidden = !value;
}
