/**
 * The Notifications… dialog against the real server: choices saved by the
 * server and shown again after a reload; a malformed webhook URL is said in
 * the dialog, which stays open with what was typed.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';

import type { INotificationSettings } from '../../labextension/src/api/types';
import {
  PANEL_ID,
  apiGet,
  dialog,
  dialogButton,
  runFromPalette,
  screenshotDialog
} from './helpers';

function form(page: IJupyterLabPageFixture) {
  return dialog(page).getByTestId('gpu-env-notify-form');
}

test.describe('Notifications', () => {
  test('choices are kept by the server; a bad URL is said in the dialog', async ({
    page
  }) => {
    await runFromPalette(page, 'Job notifications…', {
      command: 'jupyter-gpu-env:notification-settings'
    });
    await expect(form(page)).toContainText('E-mail is off on this server');
    await expect(form(page).getByTestId('gpu-env-notify-on')).toHaveValue(
      'failed'
    );

    const webhook = form(page).getByTestId('gpu-env-notify-webhook');
    await form(page)
      .getByTestId('gpu-env-notify-email')
      .fill('alice@example.org');
    await webhook.fill('ftp://chat.example.org/hooks/abc');
    await dialogButton(page, 'Save', true).click();
    const status = form(page).getByTestId('gpu-env-notify-status');
    await expect(status).toContainText('http:// or https://');
    await expect(dialog(page)).toHaveCount(1);
    await expect(webhook).toHaveValue('ftp://chat.example.org/hooks/abc');
    await screenshotDialog(page, 'notifications-dialog.png');

    await webhook.fill('https://chat.example.org/hooks/abc');
    await form(page).getByTestId('gpu-env-notify-on').selectOption('all');
    await dialogButton(page, 'Save', true).click();
    await expect(dialog(page)).toHaveCount(0);
    expect(
      await apiGet<INotificationSettings>(page.request, 'notifications')
    ).toEqual({
      email: 'alice@example.org',
      webhook_url: 'https://chat.example.org/hooks/abc',
      on: 'all',
      email_available: false
    });

    // After a reload, from the Jobs section's button: as saved.
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);
    await page.getByTestId('gpu-env-notification-settings').click();
    await expect(form(page).getByTestId('gpu-env-notify-email')).toHaveValue(
      'alice@example.org'
    );
    await expect(webhook).toHaveValue('https://chat.example.org/hooks/abc');
    await expect(form(page).getByTestId('gpu-env-notify-on')).toHaveValue(
      'all'
    );

    // A test to a webhook nobody answers says so, in the dialog.
    await webhook.fill('http://127.0.0.1:9/hooks/abc');
    await dialogButton(page, 'Send a test').click();
    await expect(status).toContainText(
      'Webhook to http://127.0.0.1:9/…: not delivered',
      {
        timeout: 30000
      }
    );
    await expect(dialog(page)).toHaveCount(1);
    // Cleared: nothing is sent any more.
    await form(page).getByTestId('gpu-env-notify-email').fill('');
    await webhook.fill('');
    await form(page).getByTestId('gpu-env-notify-on').selectOption('failed');
    await dialogButton(page, 'Save', true).click();
    await expect(dialog(page)).toHaveCount(0);
    expect(
      await apiGet<INotificationSettings>(page.request, 'notifications')
    ).toEqual({
      email: null,
      webhook_url: null,
      on: 'failed',
      email_available: false
    });
  });
});
