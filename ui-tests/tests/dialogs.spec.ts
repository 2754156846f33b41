/**
 * Issue 27, at JupyterLab's default sidebar width: errors stay in the dialog
 * that caused them (a plan that fails keeps what was typed and says why,
 * with the solver's output a click away; "Planning…" while it is made),
 * form controls look like what they are (radios, checkboxes beside their
 * names, selects with a chevron, a wrong number said in words), and the
 * words (undo, "created from", download sizes, an empty GPU-hours chart,
 * the kernel button's two icons). One test runs in the dark theme.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type {
  ISweep,
  ITask,
  IUsageWeeks
} from '../../labextension/src/api/types';
import {
  API,
  PANEL_ID,
  dialog,
  dialogButton,
  execute,
  notebook,
  openNotebook,
  sendButton,
  sendThroughApi
} from './helpers';
import {
  chooseRowAction,
  ensureClone,
  envRow,
  removeEnvironment,
  rowAction,
  setKernel,
  waitTask
} from './environments-helpers';

const ENV = 'ui-dialogs';
const FROM_FILE = 'ui-dialogs-file';

/** What the planning status of the open dialog says, each time it changes. */
async function recordPlanStatus(page: IJupyterLabPageFixture): Promise<void> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { planStatus: string[] }).planStatus = seen;
    new MutationObserver(() => {
      const node = document.querySelector(
        '[data-testid="gpu-env-plan-status"]'
      );
      const text = node?.textContent ?? '';
      if (text && seen[seen.length - 1] !== text) {
        seen.push(text);
      }
    }).observe(document.body, {
      subtree: true,
      childList: true,
      characterData: true
    });
  });
}

async function planStatusSeen(page: IJupyterLabPageFixture): Promise<string[]> {
  return page.evaluate(
    () => (window as unknown as { planStatus: string[] }).planStatus
  );
}

/** The vertical centre of `locator`'s box. */
async function middle(locator: Locator): Promise<number> {
  const box = await locator.boundingBox();
  expect(box).not.toBeNull();
  return box!.y + box!.height / 2;
}

test.describe('Dialogs at the default sidebar width', () => {
  test.beforeEach(async ({ page }) => {
    // JupyterLab's default: the panel as a new user first sees it.
    await page.sidebar.setWidth(256);
  });

  test.afterAll(async ({ request }) => {
    await removeEnvironment(request, ENV);
    await removeEnvironment(request, FROM_FILE);
  });

  test('a failed plan keeps what was typed and says why, in the dialog', async ({
    page
  }) => {
    await ensureClone(page.request, ENV);
    await page.sidebar.openTab(PANEL_ID);
    const row = envRow(page, ENV);
    await chooseRowAction(row, 'edit-packages');
    // Idle, the dialog shows no empty progress strip: the planning status
    // waits hidden until there is something to say.
    await expect(
      dialog(page).getByTestId('gpu-env-packages-add')
    ).toBeVisible();
    await expect(dialog(page).getByTestId('gpu-env-plan-status')).toBeHidden();

    // The checklist: each box on the line of its name.
    const asttokens = dialog(page)
      .getByTestId('gpu-env-packages-remove')
      .locator('label', { hasText: 'asttokens' });
    const box = asttokens.locator('input[type="checkbox"]');
    const name = asttokens.locator('.jp-GpuEnv-pkgName');
    expect(
      Math.abs((await middle(box)) - (await middle(name)))
    ).toBeLessThanOrEqual(3);
    const boxRect = (await box.boundingBox())!;
    const nameRect = (await name.boundingBox())!;
    expect(boxRect.width).toBeLessThan(24);
    expect(nameRect.x - (boxRect.x + boxRect.width)).toBeLessThan(16);

    // A package no channel has: a real solver failure, said in the dialog.
    const removeList = dialog(page).getByTestId('gpu-env-packages-remove');
    const listHeight = (await removeList.boundingBox())!.height;
    await recordPlanStatus(page);
    const add = dialog(page).getByTestId('gpu-env-packages-add');
    await add.fill('no-such-package-27');
    await dialogButton(page, 'Review…', true).click();
    const status = dialog(page).getByTestId('gpu-env-plan-status');
    await expect(status).toHaveAttribute('data-state', 'failed');
    await expect(status).toContainText('A package is not in the channels');
    await expect(status).toContainText('no-such-package-27');
    // Issue 38, item 3: the error in view, the remove list not squeezed.
    await expect(status).toBeInViewport();
    expect((await removeList.boundingBox())!.height).toBeGreaterThanOrEqual(
      listHeight - 1
    );
    expect((await planStatusSeen(page))[0]).toMatch(/^Planning…/);
    await expect(add).toHaveValue('no-such-package-27');
    await expect(dialog(page)).toHaveCount(1);

    // A PyPI package that is nowhere: said in the index's words, not the
    // channels', naming it, with no installer text or path.
    await add.fill('');
    const pipAdd = dialog(page).getByTestId('gpu-env-packages-pip-add');
    await pipAdd.fill('no-such-pypi-package-38');
    await dialogButton(page, 'Review…', true).click();
    await expect(status).toContainText('A package is not on the package index');
    await expect(status).toContainText(
      "No package named like 'no-such-pypi-package-38'"
    );
    await expect(status).not.toContainText('channels');
    await expect(status).not.toContainText('/');
    await pipAdd.fill('');

    // A request that cannot be solved: the solver's output one click away.
    await add.fill('python=3.9');
    await dialogButton(page, 'Review…', true).click();
    await expect(status).toContainText('cannot be installed together');
    const output = dialog(page).getByTestId('gpu-env-plan-output');
    await expect(output.locator('pre')).toBeHidden();
    await output.locator('summary').click();
    await expect(output.locator('pre')).toBeVisible();
    await expect(output.locator('pre')).toContainText(
      'Cannot solve the request'
    );
    await expect(output.locator('pre')).toContainText('(unsolvable)');
    await expect(add).toHaveValue('python=3.9');

    // Fixed: the plan, whose download line never says "0 B" of unknowns;
    // backing out of it returns to what was typed.
    await add.fill('tabulate');
    await dialogButton(page, 'Review…', true).click();
    const plan = dialog(page).getByTestId('gpu-env-plan');
    await expect(plan).toContainText('tabulate');
    await expect(plan).not.toContainText('0 B to download');
    await dialogButton(page, 'Back out').click();
    await expect(dialog(page).getByTestId('gpu-env-packages-add')).toHaveValue(
      'tabulate'
    );
    await dialogButton(page, 'Review…', true).click();
    await dialogButton(page, 'Apply', true).click();
    await expect(
      page.locator('.jp-toast-message', { hasText: `Changed '${ENV}'` })
    ).toBeVisible();

    // Undo says what it did.
    await chooseRowAction(row, 'environment-history');
    await dialogButton(page, 'Undo last change', true).click();
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Undid +tabulate in '${ENV}'.`
      })
    ).toBeVisible();
  });

  test('a file that cannot be planned keeps the name typed; a made one says so', async ({
    page,
    tmpPath
  }) => {
    await removeEnvironment(page.request, FROM_FILE);
    const bad = `${tmpPath}/bad/environment.yml`;
    await page.contents.uploadContent(
      'name: bad\ndependencies:\n  - python\n  - no-such-package-27\n',
      'text',
      bad
    );
    await page.sidebar.openTab(PANEL_ID);
    // Started, not awaited: the command ends when its dialogs do.
    await page.evaluate(path => {
      void window.jupyterapp.commands.execute(
        'jupyter-gpu-env:create-from-file',
        { path }
      );
    }, bad);
    const nameField = dialog(page).getByTestId('gpu-env-create-name');
    await nameField.fill(FROM_FILE);
    await dialogButton(page, 'Review…').click();
    const status = dialog(page).getByTestId('gpu-env-plan-status');
    await expect(status).toHaveAttribute('data-state', 'failed');
    await expect(status).toContainText('no-such-package-27');
    await expect(nameField).toHaveValue(FROM_FILE);
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);

    // Made from a good file: its row says where it came from.
    const good = `${tmpPath}/good/environment.yml`;
    await page.contents.uploadContent(
      'name: good\ndependencies:\n  - python\n  - tabulate\n',
      'text',
      good
    );
    const response = await page.request.post(`${API}/environments`, {
      data: { name: FROM_FILE, from_file: good }
    });
    expect(response.status()).toBe(202);
    const task = await waitTask(page.request, (await response.json()) as ITask);
    expect(task.state).toBe('succeeded');
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);
    const origin = envRow(page, FROM_FILE).getByTestId('gpu-env-env-origin');
    await expect(origin).toHaveText('created from environment.yml');
  });

  test('the kernel button has an icon for each of its states', async ({
    page
  }) => {
    await ensureClone(page.request, ENV, { kernel: false });
    await page.sidebar.openTab(PANEL_ID);
    const button = rowAction(envRow(page, ENV), 'kernel');
    await expect(button.locator('svg')).toHaveAttribute(
      'data-icon',
      'jupyter-gpu-env:kernel-register'
    );
    await setKernel(page.request, ENV, true);
    await page.reload();
    await page.sidebar.openTab(PANEL_ID);
    await expect(button.locator('svg')).toHaveAttribute(
      'data-icon',
      'jupyter-gpu-env:kernel-unregister'
    );
    await setKernel(page.request, ENV, false);
  });

  test('a text for a number says why; the empty GPU-hours chart too', async ({
    page,
    tmpPath
  }) => {
    // A ledger with no GPU-hours: the server's own weeks, emptied, since other specs on this shared
    // test server send jobs that ask for a GPU (a MIG slice of its configured ones). The page is loaded
    // again so that the Jobs section asks for its chart through this route.
    await page.route('**/gpu-env/api/jobs/usage/weeks**', async route => {
      const real = await route.fetch();
      const answer = (await real.json()) as IUsageWeeks;
      const none = {
        gpu_hours: 0,
        gpu_hours_used: 0,
        gpu_hours_measured: 0,
        cpu_hours: 0,
        jobs: {}
      };
      const weeks = answer.weeks.map(week => ({
        ...week,
        backends: {},
        total: none
      }));
      await route.fulfill({ response: real, json: { weeks } });
    });
    await page.goto();
    await openNotebook(
      page,
      `${tmpPath}/rates.ipynb`,
      notebook([['parameters'], 'rate = 0.5'], [[], 'print(rate)'])
    );
    await sendButton(page).click();
    const rate = dialog(page).locator('[data-param="rate"]');
    await expect(rate).toHaveValue('0.5');
    await rate.fill('fast');
    await expect(dialog(page).getByRole('alert')).toHaveText(
      '“fast” is not a number: rate takes a number, like 0.5.'
    );
    await expect(dialogButton(page, 'Submit')).toBeDisabled();
    await rate.fill('0.25');
    await expect(dialog(page).getByRole('alert')).toBeHidden();
    await dialogButton(page, 'Cancel').click();

    await page.sidebar.openTab(PANEL_ID);
    await page.getByTestId('gpu-env-usage-weeks-toggle').click();
    await expect(page.getByTestId('gpu-env-usage-weeks-empty')).toContainText(
      /^No GPU-hours in the last \d+ weeks: no job that ended in them asked for a GPU\./
    );
  });

  test('the chart of a sweep chooses its columns with chevroned selects', async ({
    page,
    tmpPath
  }) => {
    const sweep = await sendThroughApi<ISweep>(
      page,
      `${tmpPath}/squares.ipynb`,
      notebook(
        [['parameters'], 'alpha = 1'],
        [['results'], "{'square': alpha ** 2, 'cube': alpha ** 3}"]
      ),
      { name: 'chevrons', sweep: { alpha: [1, 2] } }
    );
    await expect
      .poll(
        async () => {
          const response = await page.request.get(`${API}/sweeps/${sweep.id}`);
          const current = (await response.json()) as ISweep;
          return current.counts.succeeded ?? 0;
        },
        { timeout: 90000 }
      )
      .toBe(2);
    await execute(page, 'jupyter-gpu-env:sweep-results', { sweep: sweep.id });
    const chart = page.getByTestId('gpu-env-sweep-chart');
    for (const axis of ['x', 'y']) {
      const choice = chart.getByTestId(`gpu-env-sweep-chart-${axis}`);
      await expect(choice).toBeVisible();
      const wrapper = choice.locator('xpath=..');
      await expect(wrapper).toHaveClass(/jp-HTMLSelect/);
      await expect(wrapper.locator('svg')).toBeVisible();
    }
    // Both axes are named: the y axis by the value charted, turned.
    await expect(chart.getByTestId('gpu-env-sweep-chart-y-label')).toHaveText(
      'square'
    );
    await chart.getByTestId('gpu-env-sweep-chart-y').selectOption('cube');
    await expect(chart.getByTestId('gpu-env-sweep-chart-y-label')).toHaveText(
      'cube'
    );
  });
});

test.describe('Dialogs in the dark theme', () => {
  // The specs after this file expect no environment of the user's own.
  test.afterAll(async ({ request }) => {
    await removeEnvironment(request, ENV);
  });

  test('the export dialog shows two radios, one checked', async ({ page }) => {
    await page.theme.setDarkTheme();
    await page.sidebar.setWidth(256);
    await ensureClone(page.request, ENV);
    await page.sidebar.openTab(PANEL_ID);
    await chooseRowAction(envRow(page, ENV), 'export-environment');
    const radios = dialog(page).locator('input[type="radio"]');
    await expect(radios).toHaveCount(2);
    await expect(radios.first()).toBeChecked();
    await expect(radios.last()).not.toBeChecked();
    for (const radio of await radios.all()) {
      const look = await radio.evaluate(node => {
        const style = getComputedStyle(node);
        const box = node.getBoundingClientRect();
        return { appearance: style.appearance, width: box.width };
      });
      expect(look.appearance).not.toBe('none');
      expect(look.width).toBeLessThan(24);
    }
    await radios.last().check();
    await expect(radios.first()).not.toBeChecked();
    await dialogButton(page, 'Cancel').click();
  });
});
