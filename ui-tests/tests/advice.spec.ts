/**
 * Right-size advice and opportunistic jobs in the send dialog, against the
 * real server: the notebook's job history is seeded into the server's own
 * job store (seed_runs.py: two runs on a whole H100 that peaked at 3.1 GB
 * and drew 6.0 and 6.7 Wh),
 * and the local backend hands out one whole GPU and two 1g.10gb slices
 * (jupyter_server_test_config.py), so it offers the slice and the
 * opportunistic priority as on a GPU machine.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { execFileSync } from 'child_process';
import * as path from 'path';

import type { IBackendList, IJobList } from '../../labextension/src/api/types';
import {
  API,
  apiGet,
  dialog,
  dialogButton,
  notebook,
  openNotebook,
  runFromPalette,
  screenshotDialog,
  sendButton
} from './helpers';

const TRAIN = notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)']);

/** Seed two measured runs of `file`; their ids (to delete afterwards). */
function seedRuns(file: string): string[] {
  const tag = Math.floor(Math.random() * 0xffffffff)
    .toString(16)
    .padStart(8, '0');
  const out = execFileSync(
    process.env.PYTHON || 'python',
    [path.join(__dirname, '..', 'seed_runs.py'), file, tag],
    { encoding: 'utf-8' }
  );
  return JSON.parse(out) as string[];
}

async function removeJobs(
  page: IJupyterLabPageFixture,
  ids: string[]
): Promise<void> {
  for (const id of ids) {
    const response = await page.request.delete(`${API}/jobs/${id}`);
    expect([204, 404]).toContain(response.status());
  }
}

function form(page: IJupyterLabPageFixture) {
  return dialog(page).getByTestId('gpu-env-submit-form');
}

test.describe('Right-size advice in the send dialog', () => {
  test('suggests a slice from earlier runs; one click fills the fields; sent opportunistic', async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(120000);
    const file = `${tmpPath}/train.ipynb`;
    const seeded = seedRuns(file);
    const sent: string[] = [];
    try {
      await openNotebook(page, file, TRAIN);
      await sendButton(page).click();
      const advice = form(page).getByTestId('gpu-env-advice');
      await expect(advice.getByTestId('gpu-env-advice-sentence')).toHaveText(
        /^The last 2 runs peaked at 3\.1 GB and used 23 % of an H100: a 1g\.10gb slice fits/
      );
      // The earlier runs measured their energy: the sentence ends with a run's.
      await expect(advice.getByTestId('gpu-env-advice-sentence')).toContainText(
        'A run takes about 6.3 Wh, the median of the last 2.'
      );
      await expect(advice).toHaveAttribute('data-based-on', 'runs');
      await expect(advice.getByTestId('gpu-env-advice-soonest')).toHaveText(
        /^Likely to start soonest: local — 2 free 1g\.10gb slices now/
      );
      // The soonest is the backend chosen: nothing to switch to.
      await expect(advice.getByTestId('gpu-env-advice-switch')).toHaveCount(0);

      const use = advice.getByTestId('gpu-env-advice-use');
      await expect(use).toHaveText('Use 1g.10gb');
      await screenshotDialog(page, 'advice-dialog.png');
      await use.click();
      await expect(form(page).getByTestId('gpu-env-submit-mig')).toHaveValue(
        '1g.10gb'
      );
      await expect(
        form(page).getByTestId('gpu-env-submit-gpus')
      ).toBeDisabled();
      // What is filled is what it suggests: no button any more.
      await expect(use).toBeHidden();
      // Changed by hand, the button is back.
      await form(page).getByTestId('gpu-env-submit-mig').selectOption('');
      await expect(use).toBeVisible();
      await use.click();
      await expect(use).toBeHidden();

      // The local backend offers opportunistic jobs here: the choice, in words.
      const priority = form(page).getByTestId('gpu-env-submit-priority');
      await expect(priority).toBeVisible();
      await expect(
        priority.getByTestId('gpu-env-priority-description')
      ).toHaveCount(2);
      await expect(
        priority.getByTestId('gpu-env-priority-normal')
      ).toBeChecked();
      await priority.getByTestId('gpu-env-priority-opportunistic').check();

      await dialogButton(page, 'Submit').click();
      await expect(dialog(page)).toHaveCount(0);
      // The job the dialog sent, as the server recorded it.
      const listed = await apiGet<IJobList>(page.request, 'jobs');
      const job = listed.items.find(
        j => j.notebook_path === file && !seeded.includes(j.id)
      );
      expect(job).toBeDefined();
      sent.push(job!.id);
      expect(job!.priority).toBe('opportunistic');
      expect(job!.resources.mig_profile).toBe('1g.10gb');

      // The sidebar's row says it is opportunistic.
      await page.sidebar.openTab('jupyter-gpu-env:sidebar');
      await expect(
        page
          .locator(`[data-testid="gpu-env-job"][data-id="${job!.id}"]`)
          .getByTestId('gpu-env-job-priority')
      ).toHaveText('Opportunistic');
    } finally {
      await removeJobs(page, [...seeded, ...sent]);
    }
  });

  test('the palette shows the advice for the current notebook', async ({
    page,
    tmpPath
  }) => {
    const file = `${tmpPath}/palette.ipynb`;
    const seeded = seedRuns(file);
    try {
      await openNotebook(page, file, TRAIN);
      await runFromPalette(page, 'Suggest a GPU size for this notebook', {
        command: 'jupyter-gpu-env:suggest-gpu-size'
      });
      const body = dialog(page).getByTestId('gpu-env-advice-dialog');
      await expect(body.getByTestId('gpu-env-advice-sentence')).toContainText(
        'a 1g.10gb slice fits'
      );
      // Advice only: nothing to fill here.
      await expect(body.getByTestId('gpu-env-advice-use')).toHaveCount(0);
      // "Send to batch…" opens the send dialog, the suggestion one click away.
      await dialogButton(page, 'Send to batch…').click();
      await expect(form(page).getByTestId('gpu-env-advice-use')).toHaveText(
        'Use 1g.10gb'
      );
      await dialogButton(page, 'Cancel').click();
      await expect(dialog(page)).toHaveCount(0);
    } finally {
      await removeJobs(page, seeded);
    }
  });
});

test.describe('Right-size advice in the dark theme', () => {
  test('nothing measured yet: a quiet sentence, no button', async ({
    page,
    tmpPath
  }) => {
    await page.theme.setDarkTheme();
    const backends = await apiGet<IBackendList>(page.request, 'backends');
    const local = backends.backends.find(b => b.name === 'local');
    expect(local?.priorities.map(p => p.name)).toEqual([
      'normal',
      'opportunistic'
    ]);
    await openNotebook(page, `${tmpPath}/fresh.ipynb`, TRAIN);
    await sendButton(page).click();
    const advice = form(page).getByTestId('gpu-env-advice');
    await expect(advice).toHaveAttribute('data-based-on', 'nothing');
    await expect(advice.getByTestId('gpu-env-advice-sentence')).toHaveText(
      /^No run of this notebook has measured its GPU use yet/
    );
    await expect(advice.getByTestId('gpu-env-advice-use')).toHaveCount(0);
    await expect(advice.getByTestId('gpu-env-advice-soonest')).toHaveCount(0);
    await expect(
      form(page).getByTestId('gpu-env-submit-priority')
    ).toContainText(local?.priorities[1].description ?? '');
    await screenshotDialog(page, 'advice-dialog-dark.png');
    await dialogButton(page, 'Cancel').click();
  });

  test('a failing advice request hides the line and sending still works', async ({
    page,
    tmpPath
  }) => {
    await page.route(`**${API}/jobs/advice**`, route =>
      route.fulfill({ status: 500, json: { message: 'boom', reason: 'error' } })
    );
    await openNotebook(page, `${tmpPath}/failing.ipynb`, TRAIN);
    const asked = page.waitForResponse(r => r.url().includes('/jobs/advice'));
    await sendButton(page).click();
    expect((await asked).status()).toBe(500);
    await expect(
      form(page).getByTestId('gpu-env-submit-backend')
    ).toBeVisible();
    await expect(form(page).getByTestId('gpu-env-advice')).toBeHidden();
    await expect(form(page).getByTestId('gpu-env-submit-error')).toBeHidden();
    await expect(dialogButton(page, 'Submit')).toBeEnabled();
    await dialogButton(page, 'Cancel').click();
  });
});
