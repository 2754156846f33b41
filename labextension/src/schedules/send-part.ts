/**
 * "Repeat" as a part of the send dialog (`IJobsRegistry.addSendPart`):
 * while on, the dialog's button says Schedule and sends a schedule (`POST
 * schedules`) instead of one run; the schedule is listed and announced.
 */
import type { IBackendInfo, IJobRequest, ISchedule } from '../api/types';
import { ISendPart } from '../jobs/tokens';
import { ISendSchedules, scheduleSent } from './actions';
import { browserTimeZone } from './client';
import { RepeatFields } from './repeat-fields';

export class RepeatPart implements ISendPart {
  constructor(private readonly _schedules: ISendSchedules) {
    this._fields = new RepeatFields({
      preview: (text, zone) => _schedules.client.preview(text, zone),
      timezone: browserTimeZone(),
      toggle: true
    });
    this._fields.onToggle = on => this.onAcceptLabel?.(on ? 'Schedule' : null);
  }

  readonly title = 'Repeat';
  readonly label = 'Repeat';
  onAcceptLabel?: (label: string | null) => void;

  get node(): HTMLElement {
    return this._fields.node;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  active(): boolean {
    return this._fields.on;
  }

  async send(request: IJobRequest): Promise<ISchedule> {
    const timing = this._fields.timing();
    if (!timing) {
      throw new Error('Say when the notebook is to repeat.');
    }
    return this._schedules.client.create({ ...request, ...timing });
  }

  sent(made: ISendPart.Made, open: () => void): void {
    const schedule = made as ISchedule;
    this._schedules.model.add(schedule);
    scheduleSent(schedule, open);
  }

  setBackend(info: IBackendInfo | null): void {
    this._fields.setBackend(info);
  }

  setSweep(on: boolean): void {
    this._fields.setSweep(on);
  }

  dispose(): void {
    if (!this._disposed) {
      this._disposed = true;
      this._fields.dispose();
    }
  }

  private _fields: RepeatFields;
  private _disposed = false;
}
