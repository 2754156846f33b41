/**
 * Start a change whose dialog asks again when the server refuses it with a
 * message to show (a bad or taken name): clone, create from a file, share.
 */
import { ApiError, asApiError } from '../api/request';
import type { ITask } from '../api/types';
import { TaskTracker } from '../tasks/tracker';
import { cleanMessage } from './format';
import { EnvironmentsModel } from './model';
import { notifyError } from './notify';

/** Statuses whose message says what to change (shown in the dialog again). */
const REFUSALS = [400, 404, 409];

/** Started (or failed for good, notified), or refused with a message. */
export type Attempt =
  { done: true; started: boolean } | { done: false; refusal: string };

/**
 * Start a task and track it. When the server refuses it so that the dialog
 * should ask again (`retryable`), its message, with the names read again;
 * any other failure is notified with `failure` before the reason.
 */
export async function startTask(
  tracker: TaskTracker,
  model: EnvironmentsModel,
  start: () => Promise<ITask>,
  failure: string,
  retryable: (error: ApiError) => boolean = error =>
    REFUSALS.includes(error.status)
): Promise<Attempt> {
  try {
    tracker.track(await start());
    return { done: true, started: true };
  } catch (reason) {
    const error = asApiError(reason);
    if (!retryable(error)) {
      notifyError(failure, error);
      return { done: true, started: false };
    }
    await model.load();
    return { done: false, refusal: cleanMessage(error.message) };
  }
}
