/**
 * The notebook toolbar's batch kernel item: where the notebook's kernel
 * stands on the batch system, in words ("Waiting in queue 'gpu', 3rd,
 * estimated start 14:20", "Starting on node01…", "Running on node01 · 1 h
 * 52 min left", "Ended: …"), with "Stop waiting" while it waits. Hidden for
 * any other kernel, and while no session of it is seen.
 */
import {
  ReactWidget,
  ToolbarButtonComponent,
  stopIcon
} from '@jupyterlab/ui-components';
import React from 'react';

import { notifyError } from '../environments/notify';
import { NotebookBatchKernel } from './status';
import { sessionDetail, sessionWords } from './values';

function BatchStatus(props: { model: NotebookBatchKernel }): JSX.Element {
  const { model } = props;
  const session = model.session;
  if (!session) {
    return <></>;
  }
  const now = Date.now() / 1000;
  const busy = model.isBusy(session.kernel_id);
  return (
    <>
      <span
        className="jp-GpuEnv-batchStatusWords"
        title={sessionDetail(session, now) || undefined}
        data-testid="gpu-env-batch-status-words"
      >
        {sessionWords(session, now)}
      </span>
      {session.state === 'waiting' && session.job_id && (
        <ToolbarButtonComponent
          icon={stopIcon}
          label="Stop waiting"
          tooltip="Cancel the kernel's job: it leaves the queue, and the notebook has no kernel"
          disabledTooltip="Cancelling…"
          enabled={!busy}
          dataset={{ action: 'stop-waiting' }}
          onClick={() =>
            void model
              .stopWaiting()
              .catch(reason => notifyError('Could not stop waiting', reason))
          }
        />
      )}
    </>
  );
}

export class BatchKernelStatusItem extends ReactWidget {
  constructor(readonly model: NotebookBatchKernel) {
    super();
    this.addClass('jp-GpuEnv-batchStatus');
    this.node.dataset.testid = 'gpu-env-batch-status';
    this.node.setAttribute('role', 'status');
    model.changed.connect(this._sync, this);
    this._sync();
  }

  override dispose(): void {
    this.model.dispose();
    super.dispose();
  }

  protected render(): JSX.Element {
    return <BatchStatus model={this.model} />;
  }

  /** Shown only with a session; its state on the node for the styles. */
  private _sync(): void {
    const session = this.model.session;
    this.setHidden(!session);
    if (session) {
      this.node.dataset.state = session.state;
      this.node.dataset.kernel = session.kernel_id;
    } else {
      delete this.node.dataset.state;
      delete this.node.dataset.kernel;
    }
    this.update();
  }
}
