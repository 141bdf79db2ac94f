import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { ms } from './format';

export interface ChartSeries {
  label: string;
  /** Same length as the chart's times; null where there is no point. */
  values: (number | null)[];
  colour: string;
  dashed?: boolean;
}

const DARK = () => window.matchMedia('(prefers-color-scheme: dark)').matches;

/** Line colours with at least 3:1 contrast on the page's background, light or dark. */
export function palette(index: number): string {
  const light = ['#0b62c4', '#b34700', '#6f3bb0', '#00796b', '#b0175a', '#4d6b00'];
  const dark = ['#6cb6ff', '#ffa657', '#d2a8ff', '#56d4bc', '#ff7eb6', '#a5d65c'];
  const colours = DARK() ? dark : light;
  return colours[index % colours.length]!;
}

/**
 * A time chart (uPlot, canvas) sized to its container. The canvas is hidden
 * from assistive technology: the caller gives the same numbers as a table.
 */
export function TimeChart({
  times,
  series,
  label,
  window: span,
  height = 260,
}: {
  times: number[];
  series: ChartSeries[];
  label: string;
  /** The time range shown, unix seconds, whatever the points cover. */
  window: [number, number];
  height?: number;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const axisColour = DARK() ? '#c9d1d9' : '#3d4752';
    const gridColour = DARK() ? '#30363d' : '#e1e4e8';
    const axis: uPlot.Axis = { stroke: axisColour, grid: { stroke: gridColour, width: 1 }, ticks: { stroke: gridColour, width: 1 } };
    const options: uPlot.Options = {
      width: Math.max(280, element.clientWidth),
      height,
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      scales: { x: { time: true, range: () => span }, y: { range: (_self, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [axis, { ...axis, size: 84, values: (_self, ticks) => ticks.map((tick) => ms(tick)) }],
      series: [
        { label: 'Time' },
        ...series.map((line) => ({
          label: line.label,
          stroke: line.colour,
          width: 2,
          dash: line.dashed ? [6, 4] : undefined,
          spanGaps: true,
          points: { show: times.length < 60, size: 5 },
          value: (_self: uPlot, value: number | null) => ms(value),
        })),
      ],
    };
    const data: uPlot.AlignedData = [times, ...series.map((line) => line.values)];
    const plot = new uPlot(options, data, element);
    plot.root.setAttribute('aria-hidden', 'true');
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, height, span[0], span[1]]);
  return <div ref={container} class="chart" role="presentation" data-label={label} />;
}
