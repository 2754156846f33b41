/**
 * New environments from a file (the file browser's context menu, the plan,
 * the task in the Environments section) and environments shared with the
 * team (published from a row's menu, listed under "Shared", unpublished by
 * their owner). Against the real server: the demo channel (python,
 * ipykernel, pip, tabulate, offline) and the shared folder that
 * jupyter_server_test_config.py makes.
 */
import { expect, test } from '@jupyterlab/galata';
import type { IJupyterLabPageFixture } from '@jupyterlab/galata';
import type { Locator } from '@playwright/test';

import type { IEnvironmentHistory } from '../../labextension/src/api/types';
import { suggestFileEnvName } from '../../labextension/src/environments/format';
import { PANEL_ID, apiGet, dialog, dialogButton } from './helpers';
import {
  DEMO,
  chooseRowAction,
  ensureClone,
  envRow,
  environmentsSection,
  listEnvironments,
  menuItem,
  menuLabels,
  openRowMenu,
  removeEnvironment
} from './environments-helpers';

const CREATED = 'ui-from-file';
const OWN = 'ui-to-share';
const SHARED = 'ui-team-env';
const DESCRIPTION =
  'Python with tabulate for the weekly reports: clone it, do not pip install into it';

const ENVIRONMENT_YML = `name: reports
channels:
  - conda-forge
dependencies:
  - python
  - tabulate
`;

const COMMAND = 'jupyter-gpu-env:create-from-file';

/** The file browser's entry of `name` (in the folder it shows). */
function listed(page: IJupyterLabPageFixture, name: string): Locator {
  return page.locator(
    `.jp-DirListing-item:has(.jp-DirListing-itemText > span:text-is("${name}"))`
  );
}

/** Right-click `name` in the file browser; answers the context menu. */
async function contextMenuOf(
  page: IJupyterLabPageFixture,
  name: string
): Promise<Locator> {
  await page.filebrowser.refresh();
  const item = listed(page, name);
  await expect(item).toBeVisible();
  await item.click({ button: 'right' });
  // The file browser's own menu: the one that offers to delete the file.
  const menu = page.locator('.lm-Menu', {
    has: page.locator('[data-command="filebrowser:delete"]')
  });
  await expect(menu).toBeVisible();
  return menu;
}

test.describe('Environments from files', () => {
  test.afterEach(async ({ page }) => {
    // Other suites expect to find none of the user's own environments at first.
    await removeEnvironment(page.request, CREATED);
  });

  test('creates an environment from an environment.yml, after its plan', async ({
    page,
    tmpPath
  }) => {
    await removeEnvironment(page.request, CREATED);
    const file = `${tmpPath}/environment.yml`;
    expect(
      await page.contents.uploadContent(ENVIRONMENT_YML, 'text', file)
    ).toBe(true);

    const menu = await contextMenuOf(page, 'environment.yml');
    const item = menu.locator(`.lm-Menu-item[data-command="${COMMAND}"]`);
    await expect(item).toHaveText(/Create environment from this file/);
    await item.click();

    // The name: its folder's, by default; the one typed here.
    const name = dialog(page).getByTestId('gpu-env-create-name');
    const taken = (await listEnvironments(page.request)).map(e => e.name);
    await expect(name).toHaveValue(suggestFileEnvName(file, taken));
    await expect(dialog(page)).toContainText(`From ${file}`);
    await name.fill(DEMO);
    await expect(dialog(page).getByTestId('gpu-env-create-problem')).toHaveText(
      `An environment named '${DEMO}' already exists.`
    );
    const review = dialogButton(page, 'Review…');
    await expect(review).toBeDisabled();
    await name.fill(CREATED);
    await expect(review).toBeEnabled();
    await review.click();

    // The plan: what the file's packages install, nothing made yet.
    const plan = dialog(page).getByTestId('gpu-env-plan');
    await expect(plan).toBeVisible();
    await expect(dialog(page).locator('.jp-Dialog-header')).toHaveText(
      `Create '${CREATED}' from ${file}`
    );
    for (const pkg of ['python', 'tabulate']) {
      await expect(
        plan.locator('tr.jp-GpuEnv-plan-install', {
          has: page.locator(`td:text-is("${pkg}")`)
        })
      ).toHaveCount(1);
    }
    await expect(
      plan.locator('tbody tr:not(.jp-GpuEnv-plan-install)')
    ).toHaveCount(0);
    expect(
      (await listEnvironments(page.request)).map(e => e.name)
    ).not.toContain(CREATED);
    await dialogButton(page, 'Create').click();

    // The sidebar opens on the Environments section, where the task runs.
    const section = environmentsSection(page);
    await expect(section).toBeVisible();
    const task = section
      .getByTestId('gpu-env-task')
      .and(page.locator('[data-kind="create"]'));
    await expect(task).toHaveAttribute(
      'data-target',
      `environments/${CREATED}`
    );
    await expect(task).toHaveAttribute('data-state', 'succeeded', {
      timeout: 60000
    });
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Created '${CREATED}' from ${file}`
      })
    ).toBeVisible();

    const row = page
      .getByTestId('gpu-env-env-list-own')
      .locator(`[data-name="${CREATED}"]`);
    await expect(row).toBeVisible();
    await row.locator('.jp-GpuEnv-envToggle').click();
    await expect(row.getByTestId('gpu-env-env-packages')).toContainText(
      'tabulate'
    );
    // Its history starts with the file it was made from.
    const history = await apiGet<IEnvironmentHistory>(
      page.request,
      `environments/${CREATED}/history`
    );
    expect(history.changes.map(c => c.kind)).toEqual(['create']);
    expect(history.changes[0].summary).toContain(file);
  });

  test("shows the server's message for a file it cannot use, and only on such files", async ({
    page,
    tmpPath
  }) => {
    const file = `${tmpPath}/requirements.txt`;
    await page.contents.uploadContent('-e .\ntabulate\n', 'text', file);
    await page.contents.uploadContent(
      '# notes\n',
      'text',
      `${tmpPath}/notes.md`
    );

    // Not on other files.
    let menu = await contextMenuOf(page, 'notes.md');
    await expect(menu.locator(`[data-command="${COMMAND}"]`)).toBeHidden();
    await page.keyboard.press('Escape');

    menu = await contextMenuOf(page, 'requirements.txt');
    await menu.locator(`[data-command="${COMMAND}"]`).click();
    await dialog(page).getByTestId('gpu-env-create-name').fill(CREATED);
    await dialogButton(page, 'Review…').click();
    // The line and what is wrong with it, in full, as the server says, in
    // the dialog that stays open with the name typed; no plan.
    const status = dialog(page).getByTestId('gpu-env-plan-status');
    await expect(status).toHaveAttribute('data-state', 'failed');
    await expect(status).toContainText(`${file}, line 1: '-e' is a pip option`);
    await expect(dialog(page).getByTestId('gpu-env-create-name')).toHaveValue(
      CREATED
    );
    await dialogButton(page, 'Cancel').click();
    await expect(dialog(page)).toHaveCount(0);
    expect(
      (await listEnvironments(page.request)).map(e => e.name)
    ).not.toContain(CREATED);
  });
});

test.describe('Shared environments', () => {
  test.afterEach(async ({ page }) => {
    await removeEnvironment(page.request, SHARED); // unpublishes it, if left
    await removeEnvironment(page.request, OWN);
  });

  test('shares an environment with the team, lists it under Shared, unpublishes it', async ({
    page
  }) => {
    await removeEnvironment(page.request, SHARED);
    await ensureClone(page.request, OWN);
    await page.sidebar.openTab(PANEL_ID);
    const shared = page.getByTestId('gpu-env-env-list-shared');
    await expect(page.getByTestId('gpu-env-env-empty-shared')).toContainText(
      'Nothing shared with the team yet'
    );

    // Only the user's own environments can be shared.
    let menu = await openRowMenu(envRow(page, DEMO));
    await expect(menuItem(menu, 'publish-environment')).toBeHidden();
    await page.keyboard.press('Escape');

    await chooseRowAction(envRow(page, OWN), 'publish-environment');
    const share = dialogButton(page, 'Share');
    await expect(dialog(page).locator('.jp-Dialog-header')).toHaveText(
      `Share '${OWN}' with the team`
    );
    // A description is required.
    await expect(share).toBeDisabled();
    await dialog(page).getByTestId('gpu-env-publish-description').fill('   ');
    await expect(
      dialog(page).getByTestId('gpu-env-publish-description-problem')
    ).toHaveText('Say in one line what it is for.');
    await expect(share).toBeDisabled();
    await dialog(page)
      .getByTestId('gpu-env-publish-description')
      .fill(DESCRIPTION);
    await dialog(page).getByTestId('gpu-env-publish-name').fill(SHARED);
    await expect(share).toBeEnabled();
    await share.click();

    const task = envRow(page, OWN).getByTestId('gpu-env-task');
    await expect(task).toHaveAttribute('data-kind', 'publish');
    const row = shared.locator(`[data-name="${SHARED}"]`);
    await expect(row).toBeVisible({ timeout: 60000 });
    await expect(row).toHaveAttribute('data-kind', 'shared');
    const description = row.getByTestId('gpu-env-env-description');
    await expect(description).toHaveText(DESCRIPTION);
    await expect(description).toHaveAttribute('title', DESCRIPTION);
    await expect(row.getByTestId('gpu-env-env-owner')).toHaveText(
      /^by \S+ \(you\)$/
    );
    // One line at the sidebar's width: cut, with the whole text on hover.
    const box = await row.boundingBox();
    const line = await description.boundingBox();
    expect(line!.height).toBeLessThan(24);
    expect(line!.x + line!.width).toBeLessThanOrEqual(box!.x + box!.width);
    await expect(
      page.locator('.jp-toast-message', {
        hasText: `Shared '${SHARED}' with the team: ${DESCRIPTION}`
      })
    ).toBeVisible();

    // Read-only: cloned to be used; unpublished by its owner.
    menu = await openRowMenu(row);
    expect(await menuLabels(menu)).toEqual(['Clone…', 'Unpublish…']);
    await menuItem(menu, 'unpublish-environment').click();
    await expect(dialog(page).locator('.jp-Dialog-header')).toHaveText(
      `Unpublish '${SHARED}'?`
    );
    await dialogButton(page, 'Unpublish').click();
    await expect(
      page.locator('.jp-toast-message', { hasText: `Unpublished '${SHARED}'.` })
    ).toBeVisible();
    await expect(row).toHaveCount(0);
    await expect(envRow(page, OWN)).toBeVisible();
    expect(
      (await listEnvironments(page.request)).some(e => e.kind === 'shared')
    ).toBe(false);
  });
});
