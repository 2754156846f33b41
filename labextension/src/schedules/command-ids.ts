/**
 * The ids of the schedule commands (registered in commands.ts), each called
 * with `{ id }` (without one, the palette asks which schedule), and a
 * schedule row's "⋯" menu of them.
 */
import { MenuEntry, SEPARATOR, rowMenu } from '../components/menu-button';

export namespace ScheduleCommandIDs {
  export const runNow = 'jupyter-gpu-env:schedule-run-now';
  export const pause = 'jupyter-gpu-env:schedule-pause';
  export const resume = 'jupyter-gpu-env:schedule-resume';
  /** Asked first. */
  export const remove = 'jupyter-gpu-env:schedule-delete';
  export const edit = 'jupyter-gpu-env:schedule-edit';
  /** Take a new snapshot of the notebook (asked first). */
  export const snapshot = 'jupyter-gpu-env:schedule-snapshot';
  /** Set it up again where its waiting job vanished. */
  export const rearm = 'jupyter-gpu-env:schedule-rearm';
}

/** The "⋯" menu of a schedule's row. */
export function scheduleMenu(id: string): MenuEntry[] {
  return rowMenu({ id }, [
    ScheduleCommandIDs.edit,
    ScheduleCommandIDs.snapshot,
    ScheduleCommandIDs.rearm,
    SEPARATOR,
    ScheduleCommandIDs.remove
  ]);
}
