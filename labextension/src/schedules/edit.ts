/**
 * A schedule's edit dialog: when it runs (the same "Repeat" fields as the
 * send dialog, filled from its expression), its time zone, whether a run
 * may overlap the previous one, whether it is active, its name and its
 * parameters. Only what changed is sent (`PATCH schedules/{id}`); the
 * dialog stays open with the server's words when it refuses.
 */
import { Dialog } from '@jupyterlab/apputils';

import { messageOf } from '../api/request';
import type { ISchedule, ISchedulePatch } from '../api/types';
import { FormBody, field, h, textInput } from '../components/form';
import { SchedulesModel } from './model';
import { RepeatFields } from './repeat-fields';

class EditForm extends FormBody<ISchedulePatch> {
  constructor(
    private readonly _schedule: ISchedule,
    model: SchedulesModel
  ) {
    super();
    this.node.dataset.testid = 'gpu-env-schedule-edit';
    this._repeat = new RepeatFields({
      preview: (text, zone) => model.client.preview(text, zone),
      timezone: _schedule.timezone,
      toggle: false,
      initial: { schedule: _schedule.schedule, overlap: _schedule.overlap }
    });
    this._name = textInput({ value: _schedule.name, maxlength: 200 });
    this._zone = textInput({
      value: _schedule.timezone,
      'data-testid': 'gpu-env-schedule-timezone'
    });
    this._zone.addEventListener('change', () =>
      this._repeat.setTimezone(this._zone.value.trim() || 'UTC')
    );
    this._active = h('input', {
      type: 'checkbox',
      checked: _schedule.active,
      'data-testid': 'gpu-env-schedule-active'
    });
    const values = _schedule.parameters;
    this._params = h('textarea', {
      class: 'jp-mod-styled jp-GpuEnv-scheduleParams',
      rows: 3,
      spellcheck: 'false',
      'data-testid': 'gpu-env-schedule-params'
    });
    this._params.value = Object.keys(values).length
      ? JSON.stringify(values, null, 1)
      : '{}';
    this.error = h('div', {
      class: 'jp-GpuEnv-error',
      role: 'alert',
      hidden: true,
      'data-testid': 'gpu-env-schedule-edit-error'
    });
    this.node.append(
      this._repeat.node,
      field('Time zone', this._zone, 'An IANA name, such as Europe/Rome'),
      h('label', {}, this._active, ' Active (unchecked: paused)'),
      field('Name', this._name),
      field(
        'Parameters',
        this._params,
        `As JSON, whole: they replace the schedule's (the notebook's own defaults fill the rest).`
      ),
      this.error
    );
  }

  readonly error: HTMLDivElement;

  getValue(): ISchedulePatch {
    const s = this._schedule;
    const patch: ISchedulePatch = {};
    const timing = this._repeat.timing();
    const zone = this._zone.value.trim() || 'UTC';
    if (timing && timing.schedule !== s.schedule) {
      patch.schedule = timing.schedule;
    }
    if (zone !== s.timezone) {
      patch.timezone = zone;
    }
    if (timing && timing.overlap !== s.overlap) {
      patch.overlap = timing.overlap;
    }
    if (this._active.checked !== s.active) {
      patch.active = this._active.checked;
    }
    const name = this._name.value.trim();
    if (name && name !== s.name) {
      patch.name = name;
    }
    let values: unknown;
    try {
      values = JSON.parse(this._params.value.trim() || '{}');
    } catch (error) {
      throw new Error(`The parameters are not JSON: ${messageOf(error)}`);
    }
    if (
      typeof values !== 'object' ||
      values === null ||
      Array.isArray(values)
    ) {
      throw new Error('The parameters are a JSON object: {"name": value}.');
    }
    if (JSON.stringify(values) !== JSON.stringify(s.parameters)) {
      patch.parameters = values as ISchedulePatch['parameters'];
    }
    return patch;
  }

  override dispose(): void {
    this._repeat.dispose();
    super.dispose();
  }

  private _repeat: RepeatFields;
  private _name: HTMLInputElement;
  private _zone: HTMLInputElement;
  private _active: HTMLInputElement;
  private _params: HTMLTextAreaElement;
}

const SAVE = 1;

/** A dialog whose Save sends the change and closes only once it is made. */
class EditDialog extends Dialog<ISchedulePatch> {
  constructor(
    private readonly _form: EditForm,
    private readonly _save: (patch: ISchedulePatch) => Promise<ISchedule>,
    title: string
  ) {
    super({
      title,
      body: _form,
      buttons: [Dialog.cancelButton(), Dialog.okButton({ label: 'Save' })],
      defaultButton: SAVE
    });
  }

  saved: ISchedule | null = null;

  override resolve(index?: number): void {
    if ((index ?? SAVE) !== SAVE || this.saved) {
      super.resolve(index);
    } else if (!this._saving) {
      void this._send();
    }
  }

  private async _send(): Promise<void> {
    const { error } = this._form;
    this._saving = true;
    try {
      const patch = this._form.getValue();
      if (Object.keys(patch).length === 0) {
        super.resolve(0);
        return;
      }
      error.hidden = true;
      this.saved = await this._save(patch);
      super.resolve(SAVE);
    } catch (failure) {
      error.textContent = messageOf(failure).replace(/Value error, /g, '');
      error.hidden = false;
    } finally {
      this._saving = false;
    }
  }

  private _saving = false;
}

/** Ask what to change in `schedule` and change it; the schedule, or null. */
export async function editSchedule(
  schedule: ISchedule,
  model: SchedulesModel
): Promise<ISchedule | null> {
  const dialog = new EditDialog(
    new EditForm(schedule, model),
    patch => model.update(schedule.id, patch),
    `Edit the schedule '${schedule.name}'`
  );
  await dialog.launch();
  return dialog.saved;
}
