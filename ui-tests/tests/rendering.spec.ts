/**
 * How the sidebar renders answers this machine cannot produce: a failing
 * server, and GPUs with MIG slices. The browser's request is answered by
 * `page.route`, so these check the UI only; gpu-env.spec.ts covers the
 * real server.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  PANEL_ID,
  execute,
  memoryBar,
  panel,
  screenshotPanel,
  screenshotPath
} from './helpers';

const GIB = 1024 ** 3;
// The client adds a cache-busting query: `gpu-env/api/gpu?1763800000000`.
const GPU_ROUTE = /\/gpu-env\/api\/gpu(\?.*)?$/;

const SNAPSHOT_WITH_GPUS = {
  sampled_at: 1763800000.1,
  interval_seconds: 2,
  host: {
    source: 'cgroup2',
    memory: { used_bytes: 31 * GIB, limit_bytes: 32 * GIB, limited: true },
    cpu: { limit_cores: 8, limited: true, usage_cores: 1.25 }
  },
  gpus: [
    {
      index: 0,
      name: 'NVIDIA H100 80GB HBM3',
      uuid: 'GPU-0b1c9a43-1b1e-4f5c-9a1b-3e6a9e0d2f11',
      memory_used_bytes: 20 * GIB,
      memory_total_bytes: 80 * GIB,
      utilization_percent: 37,
      mig_enabled: false,
      mig_devices: [],
      visible: true,
      processes: []
    },
    {
      index: 1,
      name: 'NVIDIA A100-SXM4-80GB',
      uuid: 'GPU-5d0f0c7e-2a44-4f6e-8c1b-7a2b9d1e4c22',
      memory_used_bytes: null,
      memory_total_bytes: 80 * GIB,
      utilization_percent: null,
      mig_enabled: true,
      mig_devices: [
        {
          uuid: 'MIG-8f0d6c52-7a0b-5b6e-9d3a-1c2b3d4e5f60',
          profile: '1g.10gb',
          gpu_instance_id: 9,
          compute_instance_id: 0,
          memory_used_bytes: 3 * GIB,
          memory_total_bytes: 10 * GIB,
          sm_count: 14,
          placement_start: 6,
          placement_size: 1,
          visible: true,
          processes: []
        }
      ],
      visible: true,
      processes: []
    }
  ],
  gpu_status: {
    available: true,
    reason: 'ok',
    message: '2 GPUs visible.'
  }
};

test.describe('GPU Env sidebar rendering', () => {
  test('shows an error line, not an exception, when the API fails', async ({
    page
  }) => {
    await page.route(GPU_ROUTE, route =>
      route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({
          message: 'The GPU sampler is not running.',
          reason: 'unavailable'
        })
      })
    );
    await page.sidebar.openTab(PANEL_ID);
    await expect(page.getByTestId('gpu-env-error')).toHaveText(
      'Could not refresh: The GPU sampler is not running.'
    );
    // The other sections do not depend on the GPU reading.
    await expect(page.getByTestId('gpu-env-env-list-managed')).toBeVisible();

    // Once the server answers again, the error goes away.
    await page.unroute(GPU_ROUTE);
    await execute(page, 'jupyter-gpu-env:refresh');
    await expect(memoryBar(page)).toBeVisible();
    await expect(page.getByTestId('gpu-env-error')).toHaveCount(0);
  });

  test('lists GPUs and MIG slices with memory bars', async ({ page }) => {
    await page.route(GPU_ROUTE, route =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify(SNAPSHOT_WITH_GPUS)
      })
    );
    await page.setViewportSize({ width: 1280, height: 1000 });
    await page.sidebar.setWidth(300);
    await page.sidebar.openTab(PANEL_ID);

    const gpus = page.getByTestId('gpu-env-gpu');
    await expect(gpus).toHaveCount(2);
    await expect(gpus.nth(0)).toContainText('GPU 0 · NVIDIA H100 80GB HBM3');
    await expect(gpus.nth(0)).toContainText('20 GiB of 80 GiB');
    await expect(gpus.nth(0)).toContainText('37 % busy');
    await expect(gpus.nth(1)).toContainText('1g.10gb');
    await expect(gpus.nth(1)).toContainText('3.0 GiB of 10 GiB');
    await expect(gpus.nth(1)).toContainText('MIG slice · GPU instance 9');
    await expect(page.getByTestId('gpu-env-gpu-empty')).toHaveCount(0);

    // 31 of 32 GiB is above 95 %: the bar turns to the error colour.
    await expect(memoryBar(page)).toHaveAttribute('data-level', 'critical');
    await expect(page.getByTestId('gpu-env-cpu-bar')).toHaveAttribute(
      'data-level',
      'ok'
    );
    await screenshotPanel(page, screenshotPath('gpu-env-panel-gpus.png'));
  });

  test('memory stays on one line at the default width, whatever its figures', async ({
    page
  }) => {
    // Each answer gives the memory figures set last: short, then long.
    let memory = { used_bytes: 512 * 1024 ** 2, limit_bytes: 2 * GIB };
    await page.route(GPU_ROUTE, route =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({
          ...SNAPSHOT_WITH_GPUS,
          host: {
            ...SNAPSHOT_WITH_GPUS.host,
            memory: { ...memory, limited: true }
          }
        })
      })
    );
    await page.sidebar.setWidth(256);
    await page.sidebar.openTab(PANEL_ID);
    const header = memoryBar(page)
      .locator('xpath=..')
      .locator('.jp-GpuEnv-usageHeader');
    await expect(header).toContainText('512 MiB of 2.0 GiB');
    const label = header.locator('.jp-GpuEnv-usageLabel');
    const oneLine = (await label.boundingBox())!.height;
    const short = (await header.boundingBox())!.height;
    expect(short).toBeLessThan(oneLine * 1.5);

    // The digits grow on a later poll: the line stays one line, so the
    // section below does not move; the figure, if cut, is whole in its title.
    memory = { used_bytes: 1020.7 * GIB, limit_bytes: 1022.9 * GIB };
    const below = page.getByTestId('gpu-env-cpu-bar');
    const before = (await below.boundingBox())!.y;
    await execute(page, 'jupyter-gpu-env:refresh');
    const value = header.locator('.jp-GpuEnv-usageValue');
    await expect(value).toHaveAttribute(
      'title',
      '1021 GiB of 1023 GiB · 100 %'
    );
    expect((await header.boundingBox())!.height).toBe(short);
    expect((await below.boundingBox())!.y).toBe(before);
  });
});
