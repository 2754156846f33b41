/**
 * The schedule commands, called with `{ id }` by a schedule's row and its
 * "⋯" menu; in the palette ("Schedules: run now…", "pause…", "resume…",
 * "delete…") they ask which schedule first. Whether each is shown for a
 * schedule (pause for an active one, re-arm for one whose waiting job
 * vanished) is decided here.
 */
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { CommandRegistry } from '@lumino/commands';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { messageOf } from '../api/request';
import type { ISchedule } from '../api/types';
import { pickOne } from '../components/dialogs/pick';
import { ScheduleActions } from './actions';
import { ScheduleCommandIDs } from './command-ids';
import { describeNext, keeperNote } from './format';

type Filter = (schedule: ISchedule) => boolean;

interface ICommand {
  id: string;
  /** With an id (a row's menu), and in the palette. */
  label: string;
  palette?: string;
  caption: string;
  /** Which schedules it applies to. */
  applies: Filter;
  act: (schedule: ISchedule) => Promise<void>;
}

/** Ask which of the schedules `applies` to; its id, or null. */
async function chooseSchedule(
  actions: ScheduleActions,
  command: ICommand
): Promise<ISchedule | null> {
  const { model } = actions;
  await model.load();
  if (model.schedules === null) {
    const why = model.error ? messageOf(model.error) : 'no answer';
    Notification.error(`Could not list the schedules: ${why}`);
    return null;
  }
  const now = Date.now() / 1000;
  const items = model.schedules.filter(command.applies).map(s => ({
    id: s.id,
    label: `${s.name} — ${s.description} · ${describeNext(s, now)}`
  }));
  if (items.length === 0) {
    Notification.info(`No schedule to ${command.label.toLowerCase()}.`, {
      autoClose: 5000
    });
    return null;
  }
  const id = await pickOne({
    title: `${command.label}: which schedule?`,
    label: 'Schedule',
    items,
    okLabel: command.label,
    testId: 'gpu-env-pick-schedule'
  });
  return id ? model.find(id) : null;
}

export function registerScheduleCommands(
  commands: CommandRegistry,
  options: {
    actions: ScheduleActions;
    palette: ICommandPalette | null;
    category: string;
  }
): void {
  const { actions } = options;
  const { model } = actions;
  const list: ICommand[] = [
    {
      id: ScheduleCommandIDs.runNow,
      label: 'Run now',
      palette: 'Schedules: run now…',
      caption: "Run the schedule's notebook once now, outside its times",
      applies: () => true,
      act: s => actions.runNow(s)
    },
    {
      id: ScheduleCommandIDs.pause,
      label: 'Pause',
      palette: 'Schedules: pause…',
      caption: 'No run starts until it is resumed',
      applies: s => s.active,
      act: s => actions.setActive(s, false)
    },
    {
      id: ScheduleCommandIDs.resume,
      label: 'Resume',
      palette: 'Schedules: resume…',
      caption: 'Runs again from its next time (the times passed are not run)',
      applies: s => !s.active,
      act: s => actions.setActive(s, true)
    },
    {
      id: ScheduleCommandIDs.remove,
      label: 'Delete',
      palette: 'Schedules: delete…',
      caption: 'Stop it for good (asked first); its runs stay as jobs',
      applies: () => true,
      act: s => actions.remove(s)
    },
    {
      id: ScheduleCommandIDs.edit,
      label: 'Edit…',
      caption: 'Change when it runs, its time zone, overlap, name, values',
      applies: () => true,
      act: s => actions.edit(s)
    },
    {
      id: ScheduleCommandIDs.snapshot,
      label: 'Update snapshot…',
      caption: 'The next runs run the notebook as it is saved now',
      applies: () => true,
      act: s => actions.snapshot(s)
    },
    {
      id: ScheduleCommandIDs.rearm,
      label: 'Re-arm',
      caption:
        'Set it up again in the batch system, whose waiting job vanished',
      applies: s => keeperNote(s)?.level === 'lost',
      act: s => actions.rearm(s)
    }
  ];
  const idOf = (args: ReadonlyPartialJSONObject): string | null =>
    typeof args['id'] === 'string' ? args['id'] : null;
  for (const command of list) {
    commands.addCommand(command.id, {
      label: args =>
        idOf(args) || !command.palette ? command.label : command.palette,
      caption: command.caption,
      isVisible: args => {
        const id = idOf(args);
        const schedule = id ? model.find(id) : null;
        return id === null || schedule === null || command.applies(schedule);
      },
      isEnabled: args => !model.isBusy(idOf(args) ?? ''),
      execute: async args => {
        const id = idOf(args);
        if (id === null && !command.palette) {
          return;
        }
        let schedule = id === null ? null : model.find(id);
        if (id !== null && schedule === null) {
          // Called before the list was asked (another extension, a test).
          await model.load();
          schedule = model.find(id);
          if (schedule === null) {
            Notification.error(`There is no schedule ${id}.`);
            return;
          }
        }
        schedule ??= await chooseSchedule(actions, command);
        if (schedule) {
          await command.act(schedule);
        }
      }
    });
    if (command.palette) {
      options.palette?.addItem({
        command: command.id,
        category: options.category
      });
    }
  }
}
