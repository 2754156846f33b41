/**
 * "Run after…" in the send dialog: a choice of one queued or running job
 * after which the notebook runs (then the dialog sends a pipeline of it,
 * run-after.ts), or none, to run at once; and that choice as a part of the
 * dialog, offered through the jobs' registry.
 */
import { Notification } from '@jupyterlab/apputils';

import { field, formSection, h } from '../components/form';
import type { IJob, IJobRequest, IPipeline } from '../api/types';
import { formatTime } from '../jobs/format';
import { ISendPart } from '../jobs/tokens';
import { PipelinesClient } from './client';
import { runAfterChoices, runAfterRequest } from './run-after';

export class RunAfterField {
  /** Offers the queued and running ones of `jobs`, newest first. */
  constructor(jobs: readonly IJob[]) {
    this._jobs = runAfterChoices(jobs);
    this._select = h(
      'select',
      { class: 'jp-mod-styled', 'data-testid': 'gpu-env-submit-after' },
      h('option', { value: '' }, 'Nothing: run as soon as possible'),
      ...this._jobs.map(job =>
        h(
          'option',
          { value: job.id },
          `${job.name} — ${job.state} on ${job.backend}, sent ${formatTime(job.created_at)}`
        )
      )
    );
    const hint = h(
      'div',
      { class: 'jp-GpuEnv-fieldHint' },
      this._jobs.length
        ? 'Runs once the chosen job has succeeded, as a pipeline of the ' +
            'two; its notebook receives the job’s folder and results as ' +
            '`upstream`.'
        : 'No job is queued or running to wait for.'
    );
    this._select.disabled = this._jobs.length === 0;
    this.node = formSection(
      'Run after…',
      field('Run after', this._select),
      hint
    );
  }

  readonly node: HTMLFieldSetElement;

  /** The job chosen to wait for, or null. */
  job(): IJob | null {
    return this._jobs.find(job => job.id === this._select.value) ?? null;
  }

  private _jobs: IJob[];
  private _select: HTMLSelectElement;
}

/**
 * "Run after…" as a part of the send dialog (`IJobsRegistry.addSendPart`):
 * while a job is chosen it sends a pipeline of the two (`POST pipelines`),
 * lists it and opens its graph.
 */
export class RunAfterPart implements ISendPart {
  constructor(
    jobs: readonly IJob[],
    private readonly _options: {
      client: PipelinesClient;
      listed: (pipeline: IPipeline) => void;
      open: (pipeline: IPipeline) => void;
    }
  ) {
    this._field = new RunAfterField(jobs);
  }

  readonly title = null;
  readonly label = 'Run after…';

  get node(): HTMLElement {
    return this._field.node;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  active(): boolean {
    return this._field.job() !== null;
  }

  send(request: IJobRequest): Promise<IPipeline> {
    const before = this._field.job();
    if (!before) {
      throw new Error('Choose the job to run after.');
    }
    return this._options.client.submit(runAfterRequest(request, before));
  }

  sent(made: ISendPart.Made): void {
    const pipeline = made as IPipeline;
    this._options.listed(pipeline);
    this._options.open(pipeline);
    Notification.success(
      `'${pipeline.name}' will run after '${this._field.job()?.name ?? 'its job'}'.`,
      { autoClose: 6000 }
    );
  }

  dispose(): void {
    this._disposed = true;
  }

  private _field: RunAfterField;
  private _disposed = false;
}
