/**
 * The schedule calls of the REST API: schedules, what an expression means
 * (the preview), their actions, and the jobs a schedule ran.
 */
import { ApiClient, enc } from '../api/request';
import type {
  IJob,
  IJobList,
  ISchedule,
  IScheduleList,
  ISchedulePatch,
  ISchedulePreview,
  IScheduleRequest
} from '../api/types';

export class SchedulesClient extends ApiClient {
  /** Schedules, newest first, each with its last runs. */
  list(): Promise<IScheduleList> {
    return this.request('GET', 'schedules');
  }

  get(id: string): Promise<ISchedule> {
    return this.request('GET', `schedules/${enc(id)}`);
  }

  /** Make a schedule (the notebook snapshotted now); 400/404/409 say why not. */
  create(request: IScheduleRequest): Promise<ISchedule> {
    return this.request('POST', 'schedules', { body: request });
  }

  /** An expression in words with its next runs; a 400 says what is wrong. */
  preview(schedule: string, timezone: string): Promise<ISchedulePreview> {
    return this.request('GET', 'schedules/preview', {
      query: { schedule, timezone }
    });
  }

  /** Change, pause (`active: false`) or resume a schedule. */
  update(id: string, patch: ISchedulePatch): Promise<ISchedule> {
    return this.request('PATCH', `schedules/${enc(id)}`, { body: patch });
  }

  /** One run now, outside the schedule's times: the job. */
  runNow(id: string): Promise<IJob> {
    return this.request('POST', `schedules/${enc(id)}/run`);
  }

  /** Set a schedule up again where its waiting job vanished. */
  rearm(id: string): Promise<ISchedule> {
    return this.request('POST', `schedules/${enc(id)}/rearm`);
  }

  /** The notebook as saved now becomes what the next runs run. */
  snapshot(id: string): Promise<ISchedule> {
    return this.request('POST', `schedules/${enc(id)}/snapshot`);
  }

  /** Delete a schedule; its runs stay, as jobs. */
  async remove(id: string): Promise<void> {
    await this.request<null>('DELETE', `schedules/${enc(id)}`);
  }

  /** The jobs a schedule ran, newest first. */
  runs(id: string, limit = 10): Promise<IJobList> {
    return this.request('GET', 'jobs', { query: { schedule: id, limit } });
  }
}

/** The browser's time zone, as the schedules are sent with it. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}
