/**
 * The notification calls of the REST API: the user's choices, kept by the
 * server, and a test message to them.
 */
import { ApiClient } from '../api/request';
import type {
  INotificationChoice,
  INotificationSettings,
  INotificationTest
} from '../api/types';

export class NotificationsClient extends ApiClient {
  get(): Promise<INotificationSettings> {
    return this.request('GET', 'notifications');
  }

  /** Set the whole choice; a 400 says what is malformed. */
  put(choice: INotificationChoice): Promise<INotificationSettings> {
    return this.request('PUT', 'notifications', { body: choice });
  }

  /** Send a test message to the saved destinations. */
  test(): Promise<INotificationTest> {
    return this.request('POST', 'notifications/test', { body: {} });
  }
}
