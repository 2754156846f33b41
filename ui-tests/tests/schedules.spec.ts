/**
 * Schedules at the default sidebar width, against the real server (local
 * backend: this server keeps them): the send dialog's Repeat with its next
 * three times as one types, the schedule in the Jobs section, pause and
 * resume, run now (a job that runs and ends), delete; a bad cron line shows
 * the server's words and makes nothing. Every schedule a test makes is
 * deleted after it, as later specs share this server.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { APIRequestContext, Locator } from '@playwright/test';

import type { IScheduleList } from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  clickToastButton,
  dialog,
  dialogButton,
  notebook,
  openNotebook,
  runFromPalette,
  screenshotDialog,
  screenshotPath,
  sendButton
} from './helpers';

const QUICK = notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)']);

/** Schedules this spec names start so; deleted after each test. */
const PREFIX = 'sched-spec-';

async function schedules(request: APIRequestContext): Promise<IScheduleList> {
  return apiGet(request, 'schedules');
}

function scheduleRow(page: IJupyterLabPageFixture, name: string): Locator {
  return page.locator(`[data-testid="gpu-env-schedule"][data-name="${name}"]`);
}

/** Open the send dialog on a fresh notebook and turn Repeat on. */
async function repeatDialog(
  page: IJupyterLabPageFixture,
  file: string
): Promise<Locator> {
  await openNotebook(page, file, QUICK);
  await sendButton(page).click();
  const form = dialog(page).getByTestId('gpu-env-submit-form');
  await expect(form.getByTestId('gpu-env-repeat-body')).toBeHidden();
  await form.getByTestId('gpu-env-repeat-on').check();
  await expect(form.getByTestId('gpu-env-repeat-body')).toBeVisible();
  return form;
}

test.describe('Schedules', () => {
  test.afterEach(async ({ request }) => {
    for (const made of (await schedules(request)).items) {
      if (made.name.startsWith(PREFIX)) {
        await request.delete(`${API}/schedules/${made.id}`);
      }
    }
  });

  test('repeats a notebook daily: listed, paused, resumed, run, deleted', async ({
    page,
    tmpPath
  }) => {
    const name = `${PREFIX}daily`;
    const form = await repeatDialog(page, `${tmpPath}/daily.ipynb`);

    // Every day at a time: the next three times come as one types.
    await expect(form.getByTestId('gpu-env-repeat-kind')).toHaveValue('days');
    await form.getByTestId('gpu-env-repeat-time').fill('07:30');
    await expect(form.getByTestId('gpu-env-repeat-words')).toContainText(
      'every day at 07:30'
    );
    const next = form.getByTestId('gpu-env-repeat-next');
    await expect(next).toHaveCount(3);
    await expect(next.first()).toHaveText(
      /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{1,2} \w{3}( \d{4})? 07:30$/
    );
    // The local backend has no scheduler: the dialog says what that means.
    await expect(form.getByTestId('gpu-env-repeat-keeper')).toContainText(
      'Runs only while this Jupyter server runs'
    );
    await form.getByTestId('gpu-env-submit-name').fill(name);
    await screenshotDialog(page, 'schedule-dialog.png');
    await dialogButton(page, 'Schedule', true).click();
    await expect(dialog(page)).toHaveCount(0);

    const made = page.locator('.jp-toast-message', {
      hasText: `Scheduled '${name}'`
    });
    await expect(made).toBeVisible();
    await clickToastButton(page, made, 'Open jobs');

    const row = scheduleRow(page, name);
    await expect(row).toBeVisible();
    await expect(row.locator('.jp-GpuEnv-rowName')).toHaveText(name);
    await expect(row.getByTestId('gpu-env-schedule-description')).toContainText(
      'every day at 07:30'
    );
    const nextRun = row.getByTestId('gpu-env-schedule-next');
    await expect(nextRun).toHaveText(/^Next .* 07:30 \(in .+\)$/);
    await expect(row.getByTestId('gpu-env-schedule-keeper')).toContainText(
      'Runs only while this Jupyter server runs'
    );
    // Readable at the default sidebar width: the name is not cut.
    const nameBox = row.locator('.jp-GpuEnv-rowName');
    expect(
      await nameBox.evaluate(node => node.scrollWidth <= node.clientWidth + 1)
    ).toBe(true);

    // Pause: no next run; resume: a next run again.
    await row.locator('[data-action="pause"]').click();
    await expect(row.getByTestId('gpu-env-schedule-state')).toHaveText(
      'paused'
    );
    await expect(nextRun).toHaveText(/^Paused/);
    const paused = (await schedules(page.request)).items.find(
      s => s.name === name
    );
    expect(paused?.active).toBe(false);
    expect(paused?.next_runs).toEqual([]);
    await row.locator('[data-action="resume"]').click();
    await expect(row.getByTestId('gpu-env-schedule-state')).toHaveText(
      'active'
    );
    await expect(nextRun).toHaveText(/^Next /);

    // Run now: a job of the schedule's, listed under it once expanded.
    await row.locator('[data-action="run-now"]').click();
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Started a run of '${name}' now`
      })
    ).toBeVisible();
    await row.locator('.jp-GpuEnv-rowName').click();
    const run = row
      .getByTestId('gpu-env-schedule-runs')
      .getByTestId('gpu-env-job');
    await expect(run).toHaveCount(1);
    await expect(run).toHaveAttribute('data-state', 'succeeded', {
      timeout: 60000
    });
    await expect(run.locator('[data-action="log"]')).toBeVisible();

    // Delete, confirmed: gone from the list and from the server.
    await row.locator('[data-action="menu"]').click();
    await page
      .locator(
        '.lm-Menu.jp-GpuEnv-rowMenu .lm-Menu-item[data-command="jupyter-gpu-env:schedule-delete"]'
      )
      .click();
    await dialogButton(page, 'Delete', true).click();
    await expect(row).toHaveCount(0);
    expect(
      (await schedules(page.request)).items.some(s => s.name === name)
    ).toBe(false);
  });

  test("shows the server's words for a bad cron line and makes nothing", async ({
    page,
    tmpPath
  }) => {
    const before = (await schedules(page.request)).total;
    const form = await repeatDialog(page, `${tmpPath}/bad.ipynb`);
    await form.getByTestId('gpu-env-repeat-kind').selectOption('cron');
    await form.getByTestId('gpu-env-repeat-cron').fill('61 * * * *');
    // As one types, under the field, from GET schedules/preview.
    await expect(form.getByTestId('gpu-env-repeat-error')).toContainText(
      'minute 61 is out of range 0-59'
    );
    await expect(form.getByTestId('gpu-env-repeat-next')).toHaveCount(0);

    // Sent anyway: the dialog stays open with the server's refusal.
    await form.getByTestId('gpu-env-submit-name').fill(`${PREFIX}bad`);
    await dialogButton(page, 'Schedule', true).click();
    await expect(form.getByTestId('gpu-env-submit-error')).toContainText(
      'minute 61 is out of range 0-59'
    );
    await expect(dialog(page)).toBeVisible();
    expect((await schedules(page.request)).total).toBe(before);
    // Another Repeat mode: the refusal of the cron line goes with it
    // (issue 38, item 8), and so does the line's own error.
    await form.getByTestId('gpu-env-repeat-kind').selectOption('days');
    await expect(form.getByTestId('gpu-env-submit-error')).toBeHidden();
    await expect(form.getByTestId('gpu-env-repeat-error')).toBeHidden();
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);
  });

  test('pauses from the palette and changes the times in the edit dialog', async ({
    page,
    tmpPath
  }) => {
    const name = `${PREFIX}edited`;
    const file = `${tmpPath}/edited.ipynb`;
    await page.contents.uploadContent(QUICK, 'text', file);
    const response = await page.request.post(`${API}/schedules`, {
      data: {
        notebook_path: file,
        backend: 'local',
        name,
        schedule: '*/15 * * * *',
        timezone: 'UTC'
      }
    });
    expect(response.status()).toBe(201);
    const { id } = (await response.json()) as { id: string };
    await page.sidebar.openTab(PANEL_ID);
    const row = scheduleRow(page, name);
    await expect(row).toBeVisible();

    // "Schedules: pause…" asks which schedule, then pauses it.
    await runFromPalette(page, 'Schedules: pause', {
      command: 'jupyter-gpu-env:schedule-pause'
    });
    const picker = dialog(page).getByTestId('gpu-env-pick-schedule');
    await expect(picker.locator(`option[value="${id}"]`)).toHaveText(
      new RegExp(`^${name} — every 15 minutes`)
    );
    await picker.selectOption(id);
    await dialogButton(page, 'Pause').click();
    await expect(row.getByTestId('gpu-env-schedule-state')).toHaveText(
      'paused'
    );

    // Edit: filled from its expression; weekly on Monday and Wednesday.
    await row.locator('[data-action="menu"]').click();
    await page
      .locator(
        '.lm-Menu.jp-GpuEnv-rowMenu .lm-Menu-item[data-command="jupyter-gpu-env:schedule-edit"]'
      )
      .click();
    const edit = dialog(page).getByTestId('gpu-env-schedule-edit');
    await expect(edit.getByTestId('gpu-env-repeat-kind')).toHaveValue(
      'minutes'
    );
    await expect(edit.getByTestId('gpu-env-repeat-every')).toHaveValue('15');
    await edit.getByTestId('gpu-env-repeat-kind').selectOption('weekly');
    await edit.getByTestId('gpu-env-repeat-time').fill('08:00');
    await edit.getByTestId('gpu-env-repeat-day-wed').check();
    await edit.getByTestId('gpu-env-schedule-active').check();
    await expect(edit.getByTestId('gpu-env-repeat-next')).toHaveCount(3);
    await page
      .locator('.jp-Dialog-content')
      .screenshot({ path: screenshotPath('schedule-edit.png') });
    await dialogButton(page, 'Save').click();
    await expect(dialog(page)).toHaveCount(0);
    await expect(row.getByTestId('gpu-env-schedule-state')).toHaveText(
      'active'
    );
    const changed = (await schedules(page.request)).items.find(
      s => s.name === name
    );
    expect(changed?.schedule).toBe('0 8 * * 1,3');
    await expect(row.getByTestId('gpu-env-schedule-description')).toHaveText(
      changed?.description ?? ''
    );
    await row.screenshot({ path: screenshotPath('schedule-row.png') });
  });
});
