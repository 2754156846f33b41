/**
 * NotebookBatchKernel: where a notebook's batch kernel stands, for its
 * toolbar. While the notebook's kernelspec is a batch kernel's, it asks
 * `GET batch-kernels/{kernel_name}` every 2 s while the kernel waits in
 * its queue or starts (JupyterLab meanwhile shows it as initializing, its
 * session request open) and every 30 s once it runs, and picks the
 * notebook's session among that kernel's: by kernel id once JupyterLab has
 * the kernel, by the notebook's path before. Ten minutes before the
 * walltime's end it calls `onWalltime`, once per kernel. For any other
 * kernel it asks nothing.
 */
import { ISessionContext } from '@jupyterlab/apputils';
import { Kernel } from '@jupyterlab/services';

import { ApiError } from '../api/request';
import type { IBatchKernelSession } from '../api/types';
import { PolledModel } from '../components/polled';
import { BatchKernelsClient } from './client';
import {
  UNSEEN_INTERVAL,
  isBatchKernelName,
  notebookKernelName,
  pollInterval,
  sessionFor,
  walltimeNoticeDue
} from './values';

/** The kernel states after which the session is asked about at once. */
const ASK_ON = new Set<Kernel.Status>([
  'starting',
  'restarting',
  'autorestarting',
  'dead',
  'unknown'
]);

export class NotebookBatchKernel extends PolledModel {
  constructor(options: NotebookBatchKernel.IOptions) {
    super({
      name: 'jupyter-gpu-env:batch-kernel-status',
      interval: UNSEEN_INTERVAL,
      maxBackoff: 60 * 1000
    });
    this._client = options.client;
    this._context = options.sessionContext;
    this._path = options.path;
    this._warned = options.warned;
    this._onWalltime = options.onWalltime;
    const context = this._context;
    context.kernelChanged.connect(this._onKernel, this);
    context.statusChanged.connect(this._onStatus, this);
    context.propertyChanged.connect(this._onProperty, this);
    this._read(true);
  }

  /** The notebook's batch kernelspec, or '' for any other kernel. */
  get kernelName(): string {
    return isBatchKernelName(this._kernelName) ? this._kernelName : '';
  }

  /** The notebook's session of it, or null while none is seen. */
  get session(): IBatchKernelSession | null {
    return this.kernelName ? this._session : null;
  }

  /** Cancel the job of the kernel that waits: it stops waiting. */
  stopWaiting(): Promise<void> {
    const session = this.session;
    const job = session?.job_id;
    if (!session || !job) {
      return Promise.resolve();
    }
    return this.busyWhile(session.kernel_id, async () => {
      await this._client.cancelJob(job);
    });
  }

  override dispose(): void {
    if (!this.isDisposed) {
      this._context.kernelChanged.disconnect(this._onKernel, this);
      this._context.statusChanged.disconnect(this._onStatus, this);
      this._context.propertyChanged.disconnect(this._onProperty, this);
    }
    super.dispose();
  }

  protected override isWanted(): boolean {
    return this.kernelName !== '';
  }

  protected async fetch(): Promise<void> {
    const name = this.kernelName;
    if (!name) {
      return;
    }
    const kernelId = this._context.session?.kernel?.id ?? null;
    let sessions: IBatchKernelSession[] = [];
    try {
      sessions = (await this._client.get(name)).sessions;
    } catch (error) {
      // Removed meanwhile: nothing to show.
      if (!(error instanceof ApiError && error.status === 404)) {
        throw error;
      }
    }
    if (name !== this.kernelName) {
      return; // the notebook changed kernels while this was asked
    }
    const session = sessionFor(sessions, kernelId, this._path());
    this._session = session;
    this.interval = pollInterval(session, this._starting());
    if (
      session &&
      !this._warned.has(session.kernel_id) &&
      walltimeNoticeDue(session, Date.now() / 1000)
    ) {
      this._warned.add(session.kernel_id);
      this._onWalltime(session);
    }
  }

  /** Whether JupyterLab is starting the notebook's kernel. */
  private _starting(): boolean {
    const status = this._context.kernelDisplayStatus;
    return status === 'initializing' || status === 'starting';
  }

  private _onKernel(): void {
    this._read(true);
  }

  /** A kernel starting, restarting or gone may be a new session: ask. */
  private _onStatus(_: ISessionContext, status: Kernel.Status): void {
    this._read(ASK_ON.has(status));
  }

  private _onProperty(): void {
    this._read(false);
  }

  /**
   * Read the notebook's kernelspec again; ask at once when it changed or
   * `ask` (not on every busy and idle of a running kernel).
   */
  private _read(ask: boolean): void {
    const context = this._context;
    const specs = context.specsManager.specs?.kernelspecs ?? {};
    const name = notebookKernelName({
      running: context.session?.kernel?.name,
      displayName: context.kernelDisplayName,
      preferred: context.kernelPreference.name,
      specs: Object.fromEntries(
        Object.entries(specs).map(([key, spec]) => [
          key,
          spec?.display_name ?? key
        ])
      )
    });
    const changed = name !== this._kernelName;
    this._kernelName = name;
    if (changed) {
      this._session = null;
      this.interval = UNSEEN_INTERVAL;
      this.emitChanged();
    }
    if (this.kernelName && (changed || ask)) {
      void this.refresh().catch(() => undefined);
    }
  }

  private _client: BatchKernelsClient;
  private _context: ISessionContext;
  private _path: () => string;
  private _warned: Set<string>;
  private _onWalltime: (session: IBatchKernelSession) => void;
  private _kernelName = '';
  private _session: IBatchKernelSession | null = null;
}

export namespace NotebookBatchKernel {
  export interface IOptions {
    client: BatchKernelsClient;
    sessionContext: ISessionContext;
    /** The notebook's path below the server's root, as now. */
    path: () => string;
    /** The kernels already told of their walltime's end (shared by all notebooks). */
    warned: Set<string>;
    /** Tell the user the walltime ends within ten minutes. */
    onWalltime: (session: IBatchKernelSession) => void;
  }
}
