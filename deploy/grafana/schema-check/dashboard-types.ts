// The types Meridian's dashboards (deploy/grafana/dashboards/*.json) are checked against: Grafana's own, from npm
// @grafana/schema (pinned in package.json), narrowed to what Meridian uses. io.meridian.deploy.DashboardSchemaTest
// writes one `const x: MeridianDashboard = <the JSON>;` per file and runs `tsc --noEmit` over them (no Grafana server
// can be installed here, so this and the panel queries run against a real Prometheus are the dashboards' tests).
import type { DataQuery, Dashboard, Panel } from '@grafana/schema';
import type * as stat from '@grafana/schema/dist/esm/raw/composable/stat/panelcfg/x/StatPanelCfg_types.gen';
import type * as timeseries from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

// JSON has strings where the schema has string enums (TooltipDisplayMode.Multi = "multi"): `${E}` is the union of
// an enum's values, so a JSON string is accepted exactly when it is one of them
export type Jsonify<T> = T extends string
  ? `${T}`
  : T extends Array<infer E>
    ? Array<Jsonify<E>>
    : T extends object
      ? { [K in keyof T]: Jsonify<T[K]> }
      : T;

// the query model of Grafana's Prometheus data source (not part of @grafana/schema)
export interface PromQuery extends DataQuery {
  expr: string;
  legendFormat?: string;
  range?: boolean;
  instant?: boolean;
  interval?: string;
  format?: 'time_series' | 'table' | 'heatmap';
}

// a panel whose options and custom field config are its plugin's (the schema's Panel leaves options untyped)
type Typed<Options, Custom> = Omit<Panel<Options, Custom>, 'options' | 'targets' | 'type'> & {
  options: Options;
  targets: PromQuery[];
};

export type TimeSeriesPanel = Jsonify<Typed<timeseries.Options, timeseries.FieldConfig>> & { type: 'timeseries' };
export type StatPanel = Jsonify<Typed<stat.Options, Record<string, unknown>>> & { type: 'stat' };

// every panel has a title, a description (what to do when it looks wrong), a unit and at least one query
type Meridian<P> = P & {
  title: string;
  description: string;
  fieldConfig: { defaults: { unit: string } };
  targets: [PromQuery, ...PromQuery[]];
};

export type MeridianPanel = Meridian<TimeSeriesPanel> | Meridian<StatPanel>;

export type MeridianDashboard = Jsonify<Omit<Dashboard, 'panels'>> & {
  uid: string;
  title: string;
  panels: MeridianPanel[];
};
