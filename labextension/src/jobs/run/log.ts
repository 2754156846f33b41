/**
 * A job's log in the main area: a `<pre>` that follows
 * `GET jobs/{id}/log?offset=…` chunk by chunk until the job has ended and
 * everything was read. It keeps to the bottom while the reader does.
 */
import { MainAreaWidget } from '@jupyterlab/apputils';
import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import { messageOf } from '../../api/request';
import type { IJob } from '../../api/types';
import { sendToBatchIcon } from '../../components/icons';
import {
  createMainAreaWidget,
  createStatusNode,
  ownedBy
} from '../../components/main-area';
import { PolledModel } from '../../components/polled';
import { JobsClient } from '../client';

/** Milliseconds between two reads while the log grows. */
export const LOG_INTERVAL = 1000;
/** Characters kept on screen; older text is dropped (the file keeps it). */
const MAX_CHARS = 2_000_000;

/** Where the reading of a log stands. */
export type LogState = 'reading' | 'following' | 'ended' | 'error';

/** Reads a job's log chunk by chunk until the job has ended. */
export class JobLogModel extends PolledModel {
  constructor(options: JobLogModel.IOptions) {
    super({
      name: `jupyter-gpu-env:job-log:${options.id}`,
      interval: LOG_INTERVAL,
      maxBackoff: 15000,
      visible: options.visible
    });
    this._client = options.client;
    this._id = options.id;
  }

  /** Text read since the previous chunk. */
  get received(): ISignal<this, string> {
    return this._received;
  }

  get state(): LogState {
    return this.error ? 'error' : this._state;
  }

  protected async fetch(): Promise<void> {
    // Several chunks in a row when there is a backlog, then wait.
    for (let round = 0; round < 20; round++) {
      const chunk = await this._client.log(this._id, this._offset);
      if (this.isDisposed) {
        return;
      }
      if (chunk.text) {
        this._received.emit(chunk.text);
      }
      const moved = chunk.next_offset !== this._offset;
      this._offset = chunk.next_offset;
      if (chunk.eof) {
        this._state = 'ended';
        this.stop();
        return;
      }
      this._state = 'following';
      if (!moved) {
        return;
      }
    }
  }

  private _client: JobsClient;
  private _id: string;
  private _offset = 0;
  private _state: LogState = 'reading';
  private _received = new Signal<this, string>(this);
}

export namespace JobLogModel {
  export interface IOptions {
    client: JobsClient;
    id: string;
    visible?: () => boolean;
  }
}

const STATUS: Record<LogState, string> = {
  reading: 'Reading the log…',
  following: 'Following the log…',
  ended: 'The job has ended; this is the whole log.',
  error: 'Cannot read the log'
};

/** The log as a `<pre>` that keeps to the bottom while the reader does. */
export class JobLogView extends Widget {
  constructor(options: JobLogView.IOptions) {
    super();
    this.addClass('jp-GpuEnv-jobLog');
    this.node.dataset.testid = 'gpu-env-job-log';
    this.node.dataset.jobId = options.job.id;
    this.jobId = options.job.id;
    this._pre = document.createElement('pre');
    this.node.append(this._pre);
    this.status = createStatusNode('gpu-env-job-log-status');
    this.model = ownedBy(
      this,
      new JobLogModel({
        client: options.client,
        id: options.job.id,
        visible: () => this.isVisible
      })
    );
    this.model.received.connect((_, text) => this._append(text));
    this.model.changed.connect(this._showState, this);
    this._showState();
  }

  readonly model: JobLogModel;

  /** The job whose log this is. */
  readonly jobId: string;

  /** What the view is doing (following, ended, error), for the toolbar. */
  readonly status: HTMLSpanElement;

  private _append(text: string): void {
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

  private _showState(): void {
    const state = this.model.state;
    const error = this.model.error;
    this.status.textContent = error
      ? `${STATUS.error}: ${messageOf(error)}`
      : STATUS[state];
    this.status.dataset.state = state;
    this.node.dataset.state = state;
    if (state === 'ended' && !this._pre.textContent) {
      this._pre.textContent = '(The log is empty.)';
    }
  }

  private _pre: HTMLPreElement;
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
  return createMainAreaWidget({
    content,
    id: `jupyter-gpu-env-job-log-${job.id}`,
    label: `Log: ${job.name}`,
    caption: `The log of job ${job.id} (${job.log_path})`,
    icon: sendToBatchIcon,
    status: content.status
  });
}
