/**
 * A job's log in the main area: a `<pre>` that follows
 * `GET jobs/{id}/log?offset=…` chunk by chunk until the job has ended and
 * everything was read. It keeps to the bottom while the reader does.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import { Toolbar } from '@jupyterlab/ui-components';
import { Poll } from '@lumino/polling';
import { Widget } from '@lumino/widgets';

import { ApiError } from '../api';
import { JobsClient } from './api';
import { sendToBatchIcon } from './icons';
import { IJob, ILogChunk } from './types';

/** Milliseconds between two reads while the log grows. */
export const LOG_INTERVAL = 1000;
/** Characters kept on screen; older text is dropped (the file keeps it). */
const MAX_CHARS = 2_000_000;

export class JobLogView extends Widget {
  constructor(options: JobLogView.IOptions) {
    super();
    this.addClass('jp-GpuEnv-jobLog');
    this.node.dataset.testid = 'gpu-env-job-log';
    this.node.dataset.jobId = options.job.id;
    this._client = options.client;
    this._id = options.job.id;
    this._pre = document.createElement('pre');
    this._pre.className = 'jp-GpuEnv-jobLogText';
    this.node.append(this._pre);
    this.status = document.createElement('span');
    this.status.className = 'jp-GpuEnv-jobLogStatus';
    this.status.dataset.testid = 'gpu-env-job-log-status';
    this.status.setAttribute('role', 'status');
    this._setStatus('Reading the log…', 'reading');
    this._poll = new Poll<void, ApiError, 'standby'>({
      name: `jupyter-gpu-env:job-log:${this._id}`,
      factory: () => this._read(),
      frequency: { interval: LOG_INTERVAL, backoff: true, max: 15000 },
      standby: () => document.hidden || !this.isVisible
    });
  }

  /** What the view is doing (following, ended, error), for the toolbar. */
  readonly status: HTMLSpanElement;

  get isFinished(): boolean {
    return this._poll.isDisposed;
  }

  override dispose(): void {
    if (this.isDisposed) {
      return;
    }
    this._poll.dispose();
    super.dispose();
  }

  private async _read(): Promise<void> {
    // Several chunks in a row when there is a backlog, then wait.
    for (let round = 0; round < 20; round++) {
      let chunk: ILogChunk;
      try {
        chunk = await this._client.log(this._id, this._offset);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        this._setStatus(`Cannot read the log: ${message}`, 'error');
        throw error;
      }
      if (this.isDisposed) {
        return;
      }
      this._append(chunk.text);
      const moved = chunk.next_offset !== this._offset;
      this._offset = chunk.next_offset;
      if (chunk.eof) {
        this._setStatus('The job has ended; this is the whole log.', 'ended');
        if (!this._pre.textContent) {
          this._pre.textContent = '(The log is empty.)';
        }
        // Dispose after this tick has resolved.
        void Promise.resolve().then(() => this._poll.dispose());
        return;
      }
      this._setStatus('Following the log…', 'following');
      if (!moved) {
        return;
      }
    }
  }

  private _append(text: string): void {
    if (!text) {
      return;
    }
    const node = this.node;
    const atBottom =
      node.scrollHeight - node.scrollTop - node.clientHeight < 24;
    this._pre.append(document.createTextNode(text));
    if ((this._pre.textContent?.length ?? 0) > MAX_CHARS) {
      const kept = (this._pre.textContent ?? '').slice(-MAX_CHARS / 2);
      this._pre.textContent = `[… earlier lines in the log file …]\n${kept}`;
    }
    if (atBottom) {
      node.scrollTop = node.scrollHeight;
    }
  }

  private _setStatus(text: string, state: string): void {
    this.status.textContent = text;
    this.status.dataset.state = state;
    this.node.dataset.state = state;
  }

  private _client: JobsClient;
  private _id: string;
  private _offset = 0;
  private _pre: HTMLPreElement;
  private _poll: Poll<void, ApiError, 'standby'>;
}

export namespace JobLogView {
  export interface IOptions {
    client: JobsClient;
    job: IJob;
  }
}

/** A main-area widget with the log of `job`. */
export function createLogWidget(
  client: JobsClient,
  job: IJob
): MainAreaWidget<JobLogView> {
  const content = new JobLogView({ client, job });
  const widget = new MainAreaWidget({ content });
  widget.id = `jupyter-gpu-env-job-log-${job.id}`;
  widget.title.label = `Log: ${job.name}`;
  widget.title.caption = `The log of job ${job.id} (${job.log_path})`;
  widget.title.icon = sendToBatchIcon;
  widget.title.closable = true;
  widget.toolbar.addItem('spacer', Toolbar.createSpacerItem());
  widget.toolbar.addItem('status', new Widget({ node: content.status }));
  return widget;
}
