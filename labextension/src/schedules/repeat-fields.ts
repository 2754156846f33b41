/**
 * The "Repeat" part of the send dialog (and of a schedule's edit dialog):
 * every N minutes, hours or days at a time, weekly on chosen days, or a
 * cron line; whether a run may overlap the previous one; and, as one types,
 * the expression in words with its next three times in the user's time
 * (`GET schedules/preview`, debounced), or the server's words for what is
 * wrong, under the fields.
 */
import { field, h, select, textInput } from '../components/form';
import { messageOf } from '../api/request';
import type {
  IBackendInfo,
  IScheduleTiming,
  ISchedulePreview,
  Overlap
} from '../api/types';
import {
  DEFAULT_CHOICE,
  IRepeatChoice,
  RepeatKind,
  WEEKDAYS,
  choiceNote,
  fromExpression,
  sameChoice,
  toExpression
} from './expression';
import { browserTimeZone } from './client';
import { SERVER_KEPT, formatDue } from './format';

/** Milliseconds of quiet typing before the preview is asked. */
export const PREVIEW_DELAY = 300;

const KINDS: [RepeatKind, string][] = [
  ['minutes', 'Every N minutes'],
  ['hours', 'Every N hours'],
  ['days', 'Every N days, at a time'],
  ['weekly', 'Weekly, on chosen days'],
  ['cron', 'A cron line (advanced)']
];

const UNITS: Partial<Record<RepeatKind, string>> = {
  minutes: 'minutes',
  hours: 'hours',
  days: 'days'
};

export class RepeatFields {
  constructor(options: RepeatFields.IOptions) {
    this._options = options;
    const initial = options.initial
      ? fromExpression(options.initial.schedule)
      : { ...DEFAULT_CHOICE };
    this._initial = options.initial ? initial : null;
    const id = (name: string): string => `gpu-env-repeat-${name}`;
    this._toggle = h('input', { type: 'checkbox', 'data-testid': id('on') });
    this._kind = select(KINDS, initial.kind, { 'data-testid': id('kind') });
    this._every = h('input', {
      type: 'number',
      class: 'jp-mod-styled',
      min: 1,
      step: 1,
      value: initial.every,
      'data-testid': id('every')
    });
    this._minute = h('input', {
      type: 'number',
      class: 'jp-mod-styled',
      min: 0,
      max: 59,
      step: 1,
      value: initial.minute,
      'data-testid': id('minute')
    });
    this._time = h('input', {
      type: 'time',
      class: 'jp-mod-styled',
      value: initial.time,
      'data-testid': id('time')
    });
    this._days = h('div', { class: 'jp-GpuEnv-repeatDays', role: 'group' });
    for (const [day, label] of WEEKDAYS) {
      const box = h('input', {
        type: 'checkbox',
        value: day,
        checked: initial.weekdays.includes(day),
        'data-testid': id(`day-${label.toLowerCase()}`)
      });
      this._days.append(h('label', {}, box, label));
    }
    this._cron = textInput({
      value: initial.cron,
      placeholder: '0 6 * * 1-5',
      'aria-label': 'Cron line',
      'data-testid': id('cron')
    });
    this._overlap = select(
      [
        ['skip', 'Skip a run while the previous one still runs'],
        ['allow', 'Start it anyway (runs may overlap)']
      ],
      options.initial?.overlap ?? 'skip',
      { 'data-testid': id('overlap') }
    );
    this._note = h('div', { class: 'jp-GpuEnv-fieldHint', hidden: true });
    this._preview = h('div', {
      class: 'jp-GpuEnv-repeatPreview',
      role: 'status',
      'aria-live': 'polite',
      'data-testid': id('preview')
    });
    this._error = h('div', {
      class: 'jp-GpuEnv-error',
      role: 'alert',
      hidden: true,
      'data-testid': id('error')
    });
    this._keeper = h('div', {
      class: 'jp-GpuEnv-fieldHint jp-GpuEnv-repeatKeeper',
      hidden: true,
      'data-testid': id('keeper')
    });
    this._why = h('div', { class: 'jp-GpuEnv-fieldHint', hidden: true });
    this._zoneHint = h('div', { class: 'jp-GpuEnv-fieldHint' });
    this._sayZone();

    this._fields = {
      every: field('Every', this._every),
      minute: field('Minutes past the hour', this._minute),
      time: field('At', this._time),
      days: field('On', this._days),
      cron: field(
        'Cron line or ISO-8601 interval',
        this._cron,
        'minute hour day month weekday, as 0 6 * * 1-5; or R/2026-12-01T06:00:00Z/PT6H'
      )
    };
    this._body = h(
      'div',
      { class: 'jp-GpuEnv-repeatBody', 'data-testid': id('body') },
      h(
        'div',
        { class: 'jp-GpuEnv-formRow' },
        field('Repeat', this._kind),
        this._fields.every,
        this._fields.minute,
        this._fields.time
      ),
      this._fields.days,
      this._fields.cron,
      this._note,
      this._preview,
      this._error,
      field('If the previous run still runs', this._overlap),
      this._zoneHint,
      this._keeper
    );
    const parts: HTMLElement[] = [];
    if (options.toggle) {
      parts.push(
        h(
          'label',
          { class: 'jp-GpuEnv-sweepToggle' },
          this._toggle,
          'Run it again and again, on a schedule'
        ),
        this._why
      );
      this._body.hidden = true;
    } else {
      this._toggle.checked = true;
    }
    this.node = h('div', { class: 'jp-GpuEnv-repeat' }, ...parts, this._body);
    this._toggle.addEventListener('change', () => {
      this._body.hidden = !this._toggle.checked;
      this.onToggle?.(this._toggle.checked);
      this._changed();
    });
    this._body.addEventListener('input', () => this._changed());
    this._body.addEventListener('change', () => this._changed());
    this._show();
    if (!options.toggle) {
      this._changed();
    }
  }

  readonly node: HTMLElement;

  /** Told when Repeat is turned on or off. */
  onToggle: ((on: boolean) => void) | null = null;

  /** Whether the notebook is to run on a schedule. */
  get on(): boolean {
    return this._toggle.checked && !this._toggle.disabled;
  }

  /** Say, with Repeat on, what the backend's schedules depend on. */
  setBackend(info: IBackendInfo | null | undefined): void {
    const local = info?.kind === 'local';
    this._keeper.textContent = local ? SERVER_KEPT : '';
    this._keeper.hidden = !local;
  }

  /** The schedule's time zone (the edit dialog lets it change). */
  setTimezone(zone: string): void {
    this._options = { ...this._options, timezone: zone };
    this._sayZone();
    this._changed();
  }

  private _sayZone(): void {
    const zone = this._options.timezone;
    const own = zone === browserTimeZone() ? ' (this browser’s time zone)' : '';
    this._zoneHint.textContent =
      `The times of day are in ${zone}${own}; the next runs below are ` +
      'shown in this browser’s time.';
  }

  /** With a sweep, each due time runs the whole sweep: say so, and where. */
  setSweep(sweep: boolean): void {
    this._why.textContent = sweep
      ? 'Each time it is due, the whole sweep runs (one run per combination). ' +
        'Scheduled sweeps run on the local and SLURM backends; a Kubernetes ' +
        'CronJob starts one run at a time.'
      : '';
    this._why.hidden = !sweep;
  }

  /** The choice as the fields read now. */
  choice(): IRepeatChoice {
    return {
      kind: this._kind.value as RepeatKind,
      every: Number(this._every.value),
      minute: Number(this._minute.value),
      time: this._time.value,
      weekdays: [...this._days.querySelectorAll('input')]
        .filter(box => box.checked)
        .map(box => Number(box.value)),
      cron: this._cron.value
    };
  }

  /**
   * What `POST schedules` adds to the job's request; null while Repeat is
   * off. Throws in words when the choice is incomplete. In the edit dialog,
   * an unchanged choice keeps the schedule's own expression.
   */
  timing(): IScheduleTiming | null {
    if (!this.on) {
      return null;
    }
    const choice = this.choice();
    const initial = this._options.initial;
    const schedule =
      initial && this._initial && sameChoice(choice, this._initial)
        ? initial.schedule
        : toExpression(choice, new Date());
    return {
      schedule,
      timezone: this._options.timezone,
      overlap: this._overlap.value as Overlap
    };
  }

  /** Stop asking for previews (the dialog closed). */
  dispose(): void {
    window.clearTimeout(this._timer);
    this._asked += 1;
  }

  /** Show the fields of the chosen kind. */
  private _show(): void {
    const kind = this._kind.value as RepeatKind;
    const unit = UNITS[kind];
    this._fields.every.hidden = !unit;
    const label = this._fields.every.querySelector('label');
    if (label) {
      label.textContent = unit ? `Every how many ${unit}` : 'Every';
    }
    this._fields.minute.hidden = kind !== 'hours';
    this._fields.time.hidden = kind !== 'days' && kind !== 'weekly';
    this._fields.days.hidden = kind !== 'weekly';
    this._fields.cron.hidden = kind !== 'cron';
  }

  private _changed(): void {
    this._show();
    let choice: IRepeatChoice | null = null;
    let expression: string | null = null;
    let failed: string | null = null;
    try {
      choice = this.choice();
      expression = this.timing()?.schedule ?? null;
    } catch (error) {
      failed = messageOf(error);
    }
    const note = choice ? choiceNote(choice) : null;
    this._note.textContent = note ?? '';
    this._note.hidden = note === null;
    window.clearTimeout(this._timer);
    const asked = ++this._asked;
    // What was wrong with the last expression goes with it (another mode,
    // Repeat off, or a new one on its way to the server).
    this._showError(failed);
    if (expression === null) {
      if (failed === null) {
        this._say(null, null);
      }
      return;
    }
    this._preview.dataset.pending = 'true';
    const text = expression;
    this._timer = window.setTimeout(() => {
      this._options.preview(text, this._options.timezone).then(
        preview => asked === this._asked && this._say(preview, null),
        error => asked === this._asked && this._say(null, messageOf(error))
      );
    }, PREVIEW_DELAY);
  }

  private _showError(error: string | null): void {
    this._error.textContent = error ?? '';
    this._error.hidden = error === null;
    this._cron.classList.toggle('jp-GpuEnv-inputError', error !== null);
  }

  /** Show the expression in words and its next times, or what is wrong. */
  private _say(preview: ISchedulePreview | null, error: string | null): void {
    delete this._preview.dataset.pending;
    this._showError(error);
    this._preview.replaceChildren();
    if (!preview) {
      return;
    }
    const now = Date.now() / 1000;
    const times = preview.next_runs.map(run =>
      h(
        'li',
        { 'data-testid': 'gpu-env-repeat-next', title: run.local },
        formatDue(run.at, now)
      )
    );
    this._preview.append(
      h(
        'div',
        { 'data-testid': 'gpu-env-repeat-words' },
        `Runs ${preview.description}`
      ),
      times.length
        ? h(
            'div',
            {},
            'Next: ',
            h('ul', { class: 'jp-GpuEnv-repeatNext' }, ...times)
          )
        : h('div', {}, 'No run is left to come.')
    );
  }

  private _options: RepeatFields.IOptions;
  private _initial: IRepeatChoice | null;
  private _toggle: HTMLInputElement;
  private _kind: HTMLSelectElement;
  private _every: HTMLInputElement;
  private _minute: HTMLInputElement;
  private _time: HTMLInputElement;
  private _days: HTMLDivElement;
  private _cron: HTMLInputElement;
  private _overlap: HTMLSelectElement;
  private _note: HTMLDivElement;
  private _preview: HTMLDivElement;
  private _error: HTMLDivElement;
  private _keeper: HTMLDivElement;
  private _why: HTMLDivElement;
  private _zoneHint: HTMLDivElement;
  private _body: HTMLDivElement;
  private _fields: Record<
    'every' | 'minute' | 'time' | 'days' | 'cron',
    HTMLDivElement
  >;
  private _timer = 0;
  private _asked = 0;
}

export namespace RepeatFields {
  export interface IOptions {
    preview: (schedule: string, timezone: string) => Promise<ISchedulePreview>;
    /** The browser's IANA zone, sent with the schedule. */
    timezone: string;
    /** A switch that turns Repeat on (the send dialog); else always on. */
    toggle: boolean;
    /** A schedule's own values (the edit dialog). */
    initial?: { schedule: string; overlap: Overlap };
  }
}
