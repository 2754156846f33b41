/**
 * The Jobs view in the main area (a table of every job and sweep: opened
 * from the sidebar and the palette, sorted, filtered, a sweep expanded, a
 * row's action), and the sidebar at JupyterLab's default width: job, run
 * and image names in full, no horizontal overflow. Against the real server:
 * the jobs are sent through the API and run by the local backend.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type { IImage, IJob, ISweep } from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  apiGet,
  execute,
  notebook,
  panel,
  runFromPalette,
  screenshotPath,
  sendThroughApi
} from './helpers';
import { DEMO, listImages, startPack, waitTask } from './environments-helpers';

const QUICK = notebook([['parameters'], 'alpha = 1'], [[], 'print(alpha)']);
const BROKEN = notebook(
  [['parameters'], 'alpha = 1'],
  [[], "raise ValueError('no convergence')"]
);

/** Wait until the server says job `id` has ended. */
async function ended(page: IJupyterLabPageFixture, id: string): Promise<void> {
  await expect
    .poll(async () => (await apiGet<IJob>(page.request, `jobs/${id}`)).state, {
      timeout: 90000
    })
    .toMatch(/succeeded|failed|cancelled/);
}

function view(page: IJupyterLabPageFixture): Locator {
  return page.getByTestId('gpu-env-jobs-view');
}

/** The table's top-level rows (jobs and sweeps), in order. */
function topRows(page: IJupyterLabPageFixture): Locator {
  return view(page).getByTestId('gpu-env-jobs-row');
}

function currentTab(page: IJupyterLabPageFixture, label: string): Locator {
  return page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current', {
    hasText: label
  });
}

/** Whether an element's text is cut (an ellipsis or a clip), in the page. */
function isCut(locator: Locator): Promise<boolean> {
  return locator.evaluate(
    (node: Element) => node.scrollWidth > node.clientWidth + 0.5
  );
}

/** The configuration's browser, started by Playwright. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require('../playwright.config.js');

// Scrollbars as a user's browser draws them: Playwright hides them by
// default, and a scrollbar's width is what made the panel overflow.
test.use({
  launchOptions: {
    ...config.use.launchOptions,
    ignoreDefaultArgs: ['--hide-scrollbars']
  }
});

test.describe('Jobs view', () => {
  test('opens from the sidebar and the palette, sorts, filters, expands a sweep', async ({
    page,
    tmpPath
  }) => {
    const tag = `jv${test.info().retry}`;
    const beta = await sendThroughApi<IJob>(page, `${tmpPath}/b.ipynb`, QUICK, {
      name: `${tag}-beta`,
      parameters: { alpha: 1 }
    });
    const alpha = await sendThroughApi<IJob>(
      page,
      `${tmpPath}/a.ipynb`,
      QUICK,
      { name: `${tag}-alpha`, parameters: { alpha: 3 } }
    );
    const broken = await sendThroughApi<IJob>(
      page,
      `${tmpPath}/c.ipynb`,
      BROKEN,
      { name: `${tag}-broken` }
    );
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/s.ipynb`,
      QUICK,
      { name: `${tag}-sweep`, sweep: { alpha: [1, 2] } }
    );

    // One click from the sidebar's Jobs section.
    await page.sidebar.openTab(PANEL_ID);
    await page.getByTestId('gpu-env-open-jobs-view').click();
    await expect(currentTab(page, 'Jobs')).toBeVisible();
    await expect(view(page)).toBeVisible();

    // Ours only: the text filter reads names (and notebooks, parameters).
    const filter = view(page).getByTestId('gpu-env-jobs-filter');
    await filter.fill(tag);
    await expect(topRows(page)).toHaveCount(4);

    // Sorted by name with a click on its header, reversed with another.
    const name = view(page).locator('th[data-column="name"]');
    await name.getByRole('button').click();
    await expect(name).toHaveAttribute('aria-sort', 'ascending');
    const names = [
      `${tag}-alpha`,
      `${tag}-beta`,
      `${tag}-broken`,
      `${tag}-sweep`
    ];
    await expect(topRows(page).locator('td[data-column="name"]')).toHaveText(
      names.map(n => new RegExp(`^${n}`))
    );
    await name.getByRole('button').click();
    await expect(name).toHaveAttribute('aria-sort', 'descending');
    await expect(topRows(page).locator('td[data-column="name"]')).toHaveText(
      [...names].reverse().map(n => new RegExp(`^${n}`))
    );

    // The state filter: the failed one alone, once it has failed.
    await ended(page, broken.id);
    const state = view(page).getByTestId('gpu-env-jobs-state-filter');
    await state.selectOption('failed');
    await expect(topRows(page)).toHaveCount(1);
    await expect(topRows(page)).toHaveAttribute('data-name', `${tag}-broken`);
    await state.selectOption('all');

    // A parameter's value finds its job.
    await filter.fill(`${tag} alpha=3`);
    await expect(topRows(page)).toHaveCount(1);
    await expect(topRows(page)).toHaveAttribute('data-id', alpha.id);
    await expect(
      topRows(page).locator('td[data-column="parameters"]')
    ).toHaveText('alpha=3');

    // The sweep expands to its runs, each with its name.
    await filter.fill(`${tag}-sweep`);
    const sweepRow = topRows(page).and(
      page.locator(`[data-kind="sweep"][data-id="${sweep.id}"]`)
    );
    await expect(sweepRow).toContainText('2 runs');
    const toggle = sweepRow.getByRole('button', { name: /the runs of/ });
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') {
      await toggle.click();
    }
    const runs = view(page).getByTestId('gpu-env-jobs-run');
    await expect(runs.locator('td[data-column="name"]')).toHaveText([
      `${tag}-sweep [alpha=1]`,
      `${tag}-sweep [alpha=2]`
    ]);
    await expect(runs.locator('td[data-column="parameters"]')).toHaveText([
      'alpha=1',
      'alpha=2'
    ]);
    await view(page).screenshot({ path: screenshotPath('jobs-view.png') });

    // A row's action: the log, through the same command as the sidebar's.
    await ended(page, beta.id);
    await filter.fill(`${tag}-beta`);
    const row = topRows(page);
    await expect(row).toHaveAttribute('data-state', 'succeeded');
    // "Run again…" only where its command is registered.
    const runAgain = await page.evaluate(() =>
      window.jupyterapp.commands.hasCommand('jupyter-gpu-env:job-run-again')
    );
    await expect(row.locator('[data-action="run-again"]')).toHaveCount(
      runAgain ? 1 : 0
    );
    await row.locator('[data-action="log"]').click();
    const log = page.getByTestId('gpu-env-job-log');
    await expect(log).toHaveAttribute('data-state', 'ended', {
      timeout: 30000
    });
    await expect(log.locator('pre')).toContainText('1');

    // From the palette: the same view, brought back once closed.
    await page
      .locator('.lm-DockPanel-tabBar .lm-TabBar-tab', { hasText: /^Jobs$/ })
      .locator('.lm-TabBar-tabCloseIcon')
      .click();
    await expect(view(page)).toHaveCount(0);
    await runFromPalette(page, 'Open Jobs', {
      command: 'jupyter-gpu-env:open-jobs'
    });
    await expect(currentTab(page, 'Jobs')).toBeVisible();
    await expect(view(page)).toHaveCount(1);
    await expect(
      topRows(page).and(page.locator(`[data-id="${alpha.id}"]`))
    ).toBeVisible();
  });

  test('is readable in the dark theme', async ({ page, tmpPath }) => {
    const job = await sendThroughApi<IJob>(
      page,
      `${tmpPath}/dark.ipynb`,
      QUICK,
      { name: 'in-the-dark' }
    );
    await execute(page, 'apputils:change-theme', { theme: 'JupyterLab Dark' });
    await expect(page.locator('body')).toHaveAttribute(
      'data-jp-theme-light',
      'false'
    );
    try {
      await execute(page, 'jupyter-gpu-env:open-jobs');
      const row = topRows(page).and(page.locator(`[data-id="${job.id}"]`));
      await expect(row).toBeVisible();
      const colours = await row
        .locator('td[data-column="name"]')
        .evaluate((cell: Element) => {
          const luminance = (css: string): number => {
            const [r, g, b] = (css.match(/[\d.]+/g) ?? []).map(Number);
            const lin = (c: number): number => {
              const s = c / 255;
              return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
            };
            return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
          };
          const box = cell.closest('.jp-GpuEnv-jobsMainView') as Element;
          const text = getComputedStyle(cell).color;
          const background = getComputedStyle(box).backgroundColor;
          const [hi, lo] = [luminance(text), luminance(background)].sort(
            (a, b) => b - a
          );
          return { text, background, ratio: (hi + 0.05) / (lo + 0.05) };
        });
      expect(colours.text).not.toBe(colours.background);
      // WCAG's AA contrast for body text.
      expect(colours.ratio).toBeGreaterThanOrEqual(4.5);
      await view(page).screenshot({
        path: screenshotPath('jobs-view-dark.png')
      });
    } finally {
      await execute(page, 'apputils:change-theme', {
        theme: 'JupyterLab Light'
      });
    }
  });
});

test.describe('Sidebar at the default width', () => {
  test('shows job, run and image names in full, without overflow', async ({
    page,
    tmpPath
  }) => {
    let packed: IImage | null = null;
    if (!(await listImages(page.request)).some(i => i.environment === DEMO)) {
      const task = await waitTask(
        page.request,
        await startPack(page.request, DEMO, 'zstd')
      );
      expect(task.state).toBe('succeeded');
      packed = task.result as IImage;
    }
    try {
      const job = await sendThroughApi<IJob>(
        page,
        `${tmpPath}/train.ipynb`,
        QUICK,
        { name: 'train-resnet50' }
      );
      const sweep = await sendThroughApi<ISweep>(
        page,
        `${tmpPath}/classify.ipynb`,
        QUICK,
        { name: 'classify-images', sweep: { alpha: [1, 2] } }
      );
      await page.sidebar.openTab(PANEL_ID);
      // JupyterLab's default, untouched.
      const width = await panel(page).evaluate(
        (node: Element) => node.getBoundingClientRect().width
      );
      expect(width).toBeGreaterThanOrEqual(240);
      expect(width).toBeLessThanOrEqual(270);

      const sweepRow = page.locator(
        `[data-testid="gpu-env-sweep"][data-id="${sweep.id}"]`
      );
      const toggle = sweepRow.locator('.jp-GpuEnv-sweepRunsToggle');
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') {
        await toggle.click();
      }
      const names: [Locator, string][] = [
        [
          page
            .locator(`[data-testid="gpu-env-job"][data-id="${job.id}"]`)
            .locator('.jp-GpuEnv-jobName'),
          'train-resnet50'
        ],
        [
          sweepRow.locator('> .jp-GpuEnv-rowHeader .jp-GpuEnv-jobName'),
          'classify-images'
        ],
        [
          page
            .locator(
              `[data-testid="gpu-env-image"][data-environment="${DEMO}"]`
            )
            .first()
            .locator('.jp-GpuEnv-rowName'),
          DEMO
        ]
      ];
      const runs = sweepRow
        .getByTestId('gpu-env-sweep-runs')
        .locator('.jp-GpuEnv-jobName');
      await expect(runs).toHaveText([
        'classify-images [alpha=1]',
        'classify-images [alpha=2]'
      ]);
      for (const run of await runs.all()) {
        names.push([run, (await run.textContent()) ?? '']);
      }
      for (const [locator, text] of names) {
        await locator.scrollIntoViewIfNeeded();
        await expect(locator).toBeVisible();
        await expect(locator).toHaveText(text);
        expect(await isCut(locator), `${text} is cut`).toBe(false);
      }
      // Each run shows its state under its name.
      await expect(
        sweepRow
          .getByTestId('gpu-env-sweep-runs')
          .getByTestId('gpu-env-job-state')
      ).toHaveCount(2);

      // The panel fits its width: nothing scrolls sideways.
      const content = panel(page).locator('.jp-SidePanel-content');
      const overflow = await content.evaluate((node: Element) => ({
        scroll: node.scrollWidth,
        client: node.clientWidth
      }));
      expect(overflow.scroll).toBeLessThanOrEqual(overflow.client);
      const panelBox = await panel(page).evaluate((node: Element) => ({
        scroll: node.scrollWidth,
        client: node.clientWidth
      }));
      expect(panelBox.scroll).toBeLessThanOrEqual(panelBox.client);
    } finally {
      if (packed) {
        await page.request.delete(`${API}/images/${packed.id}`);
      }
    }
  });
});
