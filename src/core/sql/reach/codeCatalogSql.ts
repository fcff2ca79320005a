/**
 * The one query that reads what the database's own code is (SPEC §5 1a): every user function, operator, cast,
 * type, relation and the code attached to relations (defaults, checks, policies, indexes, triggers, rules, FK
 * actions) and event triggers. One row of JSON arrays (positional, to keep it small), so that loading it is
 * one round trip on a PostgreSQL server and on PGlite alike. Decoded by codeCatalog.ts.
 */

/** Namespaces whose objects are PostgreSQL's own: judged by name (sideEffectOf), never parsed. */
const USER_NS = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%'`;

/**
 * JIT for the catalog query: what it is, then off, then back. Plain `SET`, never set_config(): a guard in front
 * of the database lets `SET jit` pass (it changes how a plan runs, never what it reads) and holds set_config().
 * No row before PostgreSQL 11, which has no JIT.
 */
export const JIT_SETTING_SQL = `SELECT setting AS before FROM pg_settings WHERE name = 'jit'`;
export const JIT_OFF_SQL = `SET jit = off`;
export const JIT_ON_SQL = `SET jit = on`;

export const CATALOG_SQL = `
WITH rels AS (
  SELECT c.oid, n.nspname, c.relname, c.relkind, c.relrowsecurity, c.relforcerowsecurity
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${USER_NS}
), types AS (
  SELECT t.oid, n.nspname, t.typname, t.typtype, t.typbasetype,
    ARRAY[t.typinput, t.typoutput, t.typreceive, t.typsend, coalesce(r.rngcanonical, 0), coalesce(r.rngsubdiff, 0)]::oid[] AS fns
  FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace LEFT JOIN pg_range r ON r.rngtypid = t.oid
  WHERE ${USER_NS} AND t.typtype IN ('b', 'd', 'r') AND t.typelem = 0
), ops AS (
  SELECT o.oid, n.nspname, o.oprname, o.oprleft, o.oprright, o.oprcode::oid AS oprcode
  FROM pg_operator o JOIN pg_namespace n ON n.oid = o.oprnamespace WHERE ${USER_NS}
), casts AS (
  SELECT c.castsource, c.casttarget, c.castfunc, c.castcontext FROM pg_cast c WHERE c.oid >= 16384 AND c.castfunc <> 0
), trigs AS (
  SELECT t.oid, t.tgrelid, t.tgname, t.tgfoid, t.tgtype, t.tgenabled, t.tgqual IS NOT NULL AS hasqual
  FROM pg_trigger t JOIN rels r ON r.oid = t.tgrelid JOIN pg_proc p ON p.oid = t.tgfoid
  WHERE t.tgenabled <> 'D' AND NOT (t.tgisinternal AND p.pronamespace = 'pg_catalog'::regnamespace)
    AND NOT (p.pronamespace = 'pg_catalog'::regnamespace AND p.proname LIKE 'RI\\_FKey\\_%')
), evts AS (
  SELECT e.evtname, e.evtevent, e.evtfoid, e.evttags FROM pg_event_trigger e WHERE e.evtenabled <> 'D'
), aggs AS (
  SELECT a.aggfnoid, ARRAY_REMOVE(ARRAY[a.aggtransfn, a.aggfinalfn, a.aggcombinefn, a.aggserialfn, a.aggdeserialfn,
    a.aggmtransfn, a.aggminvtransfn, a.aggmfinalfn]::oid[], 0::oid) AS fns
  FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_NS}
), opclasses AS (
  -- User operator classes: their support functions and operators run when their indexes are maintained.
  SELECT oc.oid, n.nspname, oc.opcname, ARRAY(
    SELECT p.amproc::oid FROM pg_amproc p WHERE p.amprocfamily = oc.opcfamily
    UNION SELECT o.oprcode::oid FROM pg_amop a JOIN pg_operator o ON o.oid = a.amopopr WHERE a.amopfamily = oc.opcfamily) AS fns
  FROM pg_opclass oc JOIN pg_namespace n ON n.oid = oc.opcnamespace WHERE ${USER_NS}
), refs AS (
  SELECT oprcode AS oid FROM ops UNION SELECT castfunc FROM casts UNION SELECT tgfoid FROM trigs
  UNION SELECT evtfoid FROM evts UNION SELECT unnest(fns) FROM aggs
  UNION SELECT unnest(fns) FROM types UNION SELECT unnest(fns) FROM opclasses
), seqdeps AS (
  -- The sequences each default depends on (serial's nextval('s')), qualified.
  SELECT d.objid AS attrdef, json_agg(format('%s.%s', sn.nspname, sq.relname)) AS seqs
  FROM pg_depend d JOIN pg_class sq ON sq.oid = d.refobjid AND sq.relkind = 'S' JOIN pg_namespace sn ON sn.oid = sq.relnamespace
  WHERE d.classid = 'pg_attrdef'::regclass AND d.refclassid = 'pg_class'::regclass GROUP BY d.objid
), funcs AS (
  SELECT p.oid, n.nspname, p.proname, p.prokind, p.provolatile, p.proconfig, p.prosecdef, l.lanname,
    (n.nspname IN ('pg_catalog', 'information_schema')) AS builtin
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace JOIN pg_language l ON l.oid = p.prolang
  WHERE ${USER_NS} OR p.oid IN (SELECT oid FROM refs)
)
SELECT
  (SELECT json_agg(json_build_array(f.oid, f.nspname, f.proname, pg_get_function_identity_arguments(f.oid), f.lanname,
      f.prokind, f.provolatile, CASE WHEN f.lanname = 'sql' AND NOT f.builtin THEN p.prosrc END,
      CASE WHEN NOT f.builtin AND f.prokind IN ('f', 'p') AND (f.lanname = 'plpgsql' OR (f.lanname = 'sql' AND p.prosqlbody IS NOT NULL))
        THEN pg_get_functiondef(f.oid) END,
      f.proconfig, f.prosecdef, x.extname, f.builtin, ag.fns,
      CASE WHEN p.pronargdefaults > 0 AND NOT f.builtin THEN pg_get_expr(p.proargdefaults, 0) END))
   FROM funcs f JOIN pg_proc p ON p.oid = f.oid
   LEFT JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = f.oid AND d.deptype = 'e'
   LEFT JOIN pg_extension x ON x.oid = d.refobjid
   LEFT JOIN aggs ag ON ag.aggfnoid = f.oid) AS functions,
  (SELECT json_agg(json_build_array(o.oid, o.nspname, o.oprname, format_type(NULLIF(o.oprleft, 0), NULL),
      format_type(NULLIF(o.oprright, 0), NULL), o.oprcode)) FROM ops o) AS operators,
  (SELECT json_agg(json_build_array(c.castsource, c.casttarget, c.castfunc, c.castcontext, ty.typname))
   FROM casts c JOIN pg_type ty ON ty.oid = c.casttarget) AS casts,
  (SELECT json_agg(json_build_array(t.oid, t.nspname, t.typname, t.typtype,
      ARRAY_REMOVE(t.fns, 0::oid), NULLIF(t.typbasetype, 0),
      (SELECT json_agg(pg_get_expr(k.conbin, 0)) FROM pg_constraint k WHERE k.contypid = t.oid AND k.contype = 'c')))
   FROM types t) AS types,
  (SELECT json_agg(json_build_array(r.oid, r.nspname, r.relname, r.relkind, r.relrowsecurity,
      CASE WHEN r.relkind IN ('v', 'm') THEN pg_get_viewdef(r.oid) END)) FROM rels r) AS relations,
  (SELECT json_agg(json_build_array(a.attrelid, a.attname,
      -- Without the relation (0) the deparse skips opening it (3x faster); only generated columns name columns.
      pg_get_expr(ad.adbin, CASE WHEN a.attgenerated <> '' THEN ad.adrelid ELSE 0 END), a.attgenerated, a.atttypid,
      CASE WHEN a.attidentity <> '' THEN pg_get_serial_sequence(format('%I.%I', r.nspname, r.relname), a.attname) END, sd.seqs))
   FROM pg_attribute a JOIN rels r ON r.oid = a.attrelid LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
   LEFT JOIN seqdeps sd ON sd.attrdef = ad.oid
   WHERE a.attnum > 0 AND NOT a.attisdropped
     AND (a.atthasdef OR a.attidentity <> '' OR a.atttypid IN (SELECT oid FROM types) OR a.atttypid IN (SELECT castsource FROM casts))) AS columns,
  (SELECT json_agg(json_build_array(k.conrelid, k.conname, k.contype, pg_get_expr(k.conbin, k.conrelid), k.confrelid,
      k.confdeltype, k.confupdtype))
   FROM pg_constraint k JOIN rels r ON r.oid = k.conrelid WHERE k.contype = 'f' OR (k.contype = 'c' AND k.conbin IS NOT NULL)) AS constraints,
  (SELECT json_agg(json_build_array(p.polrelid, p.polname, p.polcmd, pg_get_expr(p.polqual, p.polrelid),
      pg_get_expr(p.polwithcheck, p.polrelid))) FROM pg_policy p JOIN rels r ON r.oid = p.polrelid) AS policies,
  (SELECT json_agg(json_build_array(i.indrelid,
      CASE WHEN i.indexprs IS NOT NULL OR i.indpred IS NOT NULL THEN pg_get_indexdef(i.indexrelid) END, x.user_opclasses))
   FROM pg_index i JOIN rels r ON r.oid = i.indrelid
   CROSS JOIN LATERAL (SELECT ARRAY(SELECT c FROM unnest(i.indclass::oid[]) c WHERE c IN (SELECT oid FROM opclasses)) AS user_opclasses) x
   WHERE i.indexprs IS NOT NULL OR i.indpred IS NOT NULL OR cardinality(x.user_opclasses) > 0) AS indexes,
  (SELECT json_agg(json_build_array(o.oid, o.nspname, o.opcname, o.fns)) FROM opclasses o) AS opclasses,
  (SELECT json_agg(json_build_array(t.tgrelid, t.tgname, t.tgfoid, t.tgtype, CASE WHEN t.hasqual THEN pg_get_triggerdef(t.oid) END))
   FROM trigs t) AS triggers,
  (SELECT json_agg(json_build_array(w.ev_class, w.rulename, w.ev_type, pg_get_ruledef(w.oid)))
   FROM pg_rewrite w JOIN rels r ON r.oid = w.ev_class WHERE w.ev_type <> '1' AND w.ev_enabled <> 'D') AS rules,
  (SELECT json_agg(json_build_array(e.evtname, e.evtevent, e.evtfoid, e.evttags)) FROM evts e) AS event_triggers,
  (SELECT json_agg(json_build_array(h.inhrelid, h.inhparent)) FROM pg_inherits h JOIN rels r ON r.oid = h.inhparent) AS inherits`;
