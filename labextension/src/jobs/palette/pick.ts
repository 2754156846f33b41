/**
 * The palette's pickers of the job commands: which job (to cancel, to run
 * again, whose log to show) or which sweep (whose results to open), from
 * the jobs and sweeps listed now, newest first, each with its state and
 * when. Commands called with an id do not ask.
 */
import { Notification } from '@jupyterlab/apputils';

import { messageOf } from '../../api/request';
import { pickOne } from '../../components/dialogs/pick';
import { JobsModel } from '../model';
import { JobFilter, jobChoices, sweepChoices } from './choices';

/**
 * Ask now, even with the sidebar closed; false (said) when the server
 * fails and nothing was listed before (else the last list is offered).
 */
async function listed(model: JobsModel): Promise<boolean> {
  await model.load();
  if (model.jobs === null) {
    const why = model.error ? messageOf(model.error) : 'no answer';
    Notification.error(`Could not list the jobs: ${why}`);
    return false;
  }
  return true;
}

/** What a job picker says when there is nothing to offer. */
const NONE: Record<JobFilter, string> = {
  active: 'No job is queued or running: there is nothing to cancel.',
  ended: 'No job has ended yet: there is nothing to run again.',
  any: 'There is no job yet: send a notebook to batch first.'
};

/** Ask which of the jobs `filter` offers; its id, or null. */
export async function chooseJob(
  model: JobsModel,
  options: { title: string; filter: JobFilter; okLabel: string }
): Promise<string | null> {
  if (!(await listed(model))) {
    return null;
  }
  const now = Date.now() / 1000;
  const items = jobChoices(model.jobs ?? [], options.filter, now);
  if (items.length === 0) {
    Notification.info(NONE[options.filter], { autoClose: 5000 });
    return null;
  }
  return pickOne({
    title: options.title,
    label: 'Job',
    items,
    okLabel: options.okLabel,
    testId: 'gpu-env-pick-job'
  });
}

/** Ask which sweep; its id, or null. */
export async function chooseSweep(
  model: JobsModel,
  options: { title: string; okLabel: string }
): Promise<string | null> {
  if (!(await listed(model))) {
    return null;
  }
  const sweeps = (model.entries ?? []).flatMap(entry =>
    entry.kind === 'sweep' && entry.sweep ? [entry.sweep] : []
  );
  if (sweeps.length === 0) {
    Notification.info('There is no sweep yet: send a notebook as a sweep.', {
      autoClose: 5000
    });
    return null;
  }
  return pickOne({
    title: options.title,
    label: 'Sweep',
    items: sweepChoices(sweeps, Date.now() / 1000),
    okLabel: options.okLabel,
    testId: 'gpu-env-pick-sweep'
  });
}
