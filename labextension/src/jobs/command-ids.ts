/**
 * The ids of the Jobs feature's commands (registered in commands.ts) and the
 * sweep row's menu of them: what the rows, the notifications and the
 * actions call, without depending on how the commands are made.
 */
import { MenuEntry, SEPARATOR, rowMenu } from '../components/menu-button';

export namespace JobCommandIDs {
  export const submit = 'jupyter-gpu-env:submit-notebook';
  export const showLog = 'jupyter-gpu-env:show-job-log';
  export const openOutput = 'jupyter-gpu-env:open-job-output';
  /** Cancel the job `{ id }` (confirmed first); without one, ask which. */
  export const cancel = 'jupyter-gpu-env:cancel-job';
  /** The Jobs view in the main area (a table of every job and sweep). */
  export const openView = 'jupyter-gpu-env:open-jobs';
  /**
   * "Run again…": the send dialog filled from the job `{ id }` (without
   * one, ask which). Registered by the dialog's side; callers check
   * `hasCommand` first.
   */
  export const runAgain = 'jupyter-gpu-env:job-run-again';
  /** Sweeps, called with `{ sweep: id }`. */
  export const sweepResults = 'jupyter-gpu-env:sweep-results';
  export const cancelSweep = 'jupyter-gpu-env:sweep-cancel';
  export const retrySweep = 'jupyter-gpu-env:sweep-retry';
  /** The right-size advice for the current notebook, in a dialog. */
  export const suggestGpu = 'jupyter-gpu-env:suggest-gpu-size';
  /** The "Notifications…" dialog: e-mail, webhook, browser notifications. */
  export const notificationSettings = 'jupyter-gpu-env:notification-settings';
}

/** The "⋯" menu of a sweep's row. */
export function sweepMenu(id: string): MenuEntry[] {
  return rowMenu({ sweep: id }, [
    JobCommandIDs.sweepResults,
    SEPARATOR,
    JobCommandIDs.retrySweep,
    JobCommandIDs.cancelSweep
  ]);
}
