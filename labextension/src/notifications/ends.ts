/**
 * A notification when a job ends: success with "Open output", failure with
 * the reason and the log, cancellation (unless the user cancelled it here);
 * when a sweep's last run ends, one for the sweep with "Open results"; when
 * a running job's GPU idles too long, one with "Cancel job"; when a
 * pipeline ends, one with "Open graph".
 */
import { Notification } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';

import { JobActions } from '../jobs/actions';
import { JobCommandIDs } from '../jobs/command-ids';
import {
  describeGpuIdle,
  elapsedSeconds,
  endedName,
  endedWord,
  formatClock
} from '../jobs/format';
import { JobsModel } from '../jobs/model';
import { outputOpenable } from '../jobs/row';
import { IJob, IPipeline, ISweep } from '../api/types';
import { PipelineCommandIDs } from '../pipelines/command-ids';

export function notifyJobEnd(
  job: IJob,
  model: JobsModel,
  commands: CommandRegistry
): void {
  const args = { id: job.id };
  const output: Notification.IAction = {
    label: 'Open output',
    caption: job.output_path,
    callback: () => void commands.execute(JobCommandIDs.openOutput, args)
  };
  const log: Notification.IAction = {
    label: 'Show log',
    caption: job.log_path,
    callback: () => void commands.execute(JobCommandIDs.showLog, args),
    displayType: 'link'
  };
  const took = formatClock(elapsedSeconds(job, job.finished_at ?? 0));
  const openable = outputOpenable(job);
  if (job.state === 'succeeded') {
    Notification.success(`${endedName(job)} ${endedWord(job)} in ${took}.`, {
      autoClose: 8000,
      actions: openable ? [output] : [log]
    });
  } else if (job.state === 'failed') {
    const why = job.message || job.reason || 'no reason given';
    Notification.error(`${endedName(job)} failed: ${why}`, {
      autoClose: false,
      actions: openable ? [output, log] : [log]
    });
  } else if (job.state === 'cancelled' && !model.cancelledHere(job.id)) {
    Notification.warning(
      `${endedName(job)} was cancelled${job.message ? `: ${job.message}` : '.'}`,
      { autoClose: 8000, actions: [log] }
    );
  }
}

/** The end of a sweep, with its results one click away. */
export function notifySweepEnd(
  sweep: ISweep,
  model: JobsModel,
  commands: CommandRegistry
): void {
  if (sweep.state === 'cancelled' && model.cancelledHere(sweep.id)) {
    return;
  }
  const results: Notification.IAction = {
    label: 'Open results',
    caption: 'The runs side by side',
    callback: () =>
      void commands.execute(JobCommandIDs.sweepResults, { sweep: sweep.id })
  };
  const { counts, size } = sweep;
  const done = counts.succeeded ?? 0;
  const text =
    `Sweep '${sweep.name}' ${sweep.state}: ${done} of ${size} ` +
    `${size === 1 ? 'run' : 'runs'} succeeded` +
    (counts.failed ? `, ${counts.failed} failed` : '') +
    (counts.cancelled ? `, ${counts.cancelled} cancelled` : '') +
    '.';
  const notify =
    sweep.state === 'succeeded'
      ? Notification.success
      : sweep.state === 'failed'
        ? Notification.error
        : Notification.warning;
  notify(text, {
    autoClose: sweep.state === 'failed' ? false : 8000,
    actions: [results]
  });
}

/** The end of a pipeline (its last node ended or was skipped), its graph one click away. */
export function notifyPipelineEnd(
  pipeline: IPipeline,
  commands: CommandRegistry
): void {
  const graph: Notification.IAction = {
    label: 'Open graph',
    caption: 'Its nodes and how each ended',
    callback: () =>
      void commands.execute(PipelineCommandIDs.open, { id: pipeline.id })
  };
  const counts = Object.entries(pipeline.counts)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
  const failed = pipeline.nodes.find(n => n.state === 'failed');
  const text =
    `Pipeline '${pipeline.name}' ${pipeline.state}: ${counts}` +
    (failed ? ` ('${failed.id}': ${failed.message})` : '.');
  const notify =
    pipeline.state === 'succeeded'
      ? Notification.success
      : pipeline.state === 'failed'
        ? Notification.error
        : Notification.warning;
  notify(text, {
    autoClose: pipeline.state === 'failed' ? false : 8000,
    actions: [graph]
  });
}

/** A running job's GPU has idled too long: say so, with its cancel. */
export function notifyGpuIdle(job: IJob, actions: JobActions): void {
  Notification.warning(describeGpuIdle(job), {
    autoClose: false,
    actions: [
      {
        label: 'Cancel job',
        caption: `Cancel '${job.name}' (asks first)`,
        callback: () => void actions.cancel(actions.model.find(job.id) ?? job)
      },
      {
        label: 'Show log',
        caption: job.log_path,
        callback: () => actions.showLog(job),
        displayType: 'link'
      }
    ]
  });
}
