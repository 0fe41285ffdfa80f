"""Small TS constructors: PipelineConfig factories (TS401-TS407 via model.config_checks),
CooperativeGroup (TS440), TaskLocalVariable (TS318), Smem/TmemAllocation."""
from __future__ import annotations

import dataclasses
import enum

from ts_runtime import enums as E
from ts_runtime.model.kernel import PipelineModel
from ts_runtime.model.values import is_static_int

from .common import _layout, _name_of, _signature_bind, _static, _strides
from .values import AllocationVal, ConfigVal, CoopGroupVal, DtypeVal, RUNTIME, TLVVal, UNKNOWN


# factory name -> (pipeline type, {PipelineConfig field: factory parameter or constant})
_FACTORIES = {
    "create_async_async_pipeline_cfg": (E.PipelineType.AsyncAsync, dict(
        num_bytes=0, async_producer_op="producer_op")),
    "create_tma_async_pipeline_cfg": (E.PipelineType.TmaAsync, {}),
    "create_tma_umma_pipeline_cfg": (E.PipelineType.TmaUmma, {}),
    "create_umma_async_pipeline_cfg": (E.PipelineType.UmmaAsync, dict(num_bytes=0)),
    "create_async_umma_pipeline_cfg": (E.PipelineType.AsyncUmma, dict(
        num_bytes=0, umma_consumer_producer_op="producer_op")),
    "create_umma_umma_pipeline_cfg": (E.PipelineType.UmmaUmma, dict(num_bytes=0)),
    "create_clc_fetch_async_pipeline_cfg": (E.PipelineType.ClcFetchAsync, {}),
    "create_tma_wgmma_pipeline_cfg": (E.PipelineType.TmaWgmma, {}),     # ts extension (Hopper)
}

_CONFIG_FIELDS = [f.name for f in dataclasses.fields(__import__(
    "ts_runtime.resources", fromlist=["PipelineConfig"]).PipelineConfig)]


class ConfigsMixin:
    # ================================================================== small constructors
    def _tlv(self, it, args, kwargs, call):
        names = ["dtype", "default", "default_factory", "docs", "runtime_slot_name"]
        given = dict(zip(names, args))
        given.update(kwargs)
        rng = it.rng(call) if call is not None else None
        dtype = given.get("dtype")
        has_default = "default" in given
        factory = given.get("default_factory")
        if "dtype" not in given:      # (an explicit dtype=None is accepted)
            self.ctx.report("TS318", "TaskLocalVariable requires a dtype", rng)
            return UNKNOWN
        if has_default and factory is not None and factory is not UNKNOWN:
            self.ctx.report("TS318", "TaskLocalVariable takes either default or default_factory, not both", rng)
            return UNKNOWN
        if not has_default and factory is None:
            self.ctx.report("TS318", "TaskLocalVariable requires a default or default_factory", rng)
            return UNKNOWN
        return TLVVal(dtype)

    def _coop_group(self, it, args, kwargs, call):
        from ts_runtime.pipeline import Agent
        b = dict(zip(["agent", "size", "alignment"], args))
        b.update(kwargs)
        agent, size = b.get("agent", UNKNOWN), b.get("size", 1)
        rng = it.rng(call) if call is not None else None
        if agent is not UNKNOWN:
            name = agent.name if isinstance(agent, enum.Enum) else None
            if name not in Agent.__members__:
                self.ctx.report("TS440", f"Unsupported agent type {agent!r}", rng)
                return UNKNOWN
        if is_static_int(size) and size <= 0:
            self.ctx.report("TS440", "the number of threads in a CooperativeGroup must be greater than 0", rng)
            return UNKNOWN
        return CoopGroupVal(agent, size)

    def _smem_allocation(self, it, args, kwargs, call):
        b = dict(zip(["name", "size_bytes", "alignment", "dtype", "count"], args))
        b.update(kwargs)
        size = b.get("size_bytes", 0)
        dtype, count = b.get("dtype"), b.get("count", 1)
        if dtype is not None and (size is UNKNOWN or size is RUNTIME or not size):
            if isinstance(dtype, DtypeVal):
                from .interpreter import binop
                import operator
                if size is UNKNOWN:
                    pass
                elif size is RUNTIME:
                    pass
                else:
                    size = binop(operator.floordiv, binop(operator.mul, count, dtype.width), 8)
            elif dtype is UNKNOWN and not size:
                size = UNKNOWN
        return AllocationVal(b.get("name", UNKNOWN), "smem", size, b.get("alignment", 128), dtype, count,
                             None, it.rng(call) if call is not None else None)

    def _tmem_allocation(self, it, args, kwargs, call):
        b = dict(zip(["name", "num_columns", "offset", "alignment"], args))
        b.update(kwargs)
        return AllocationVal(b.get("name", UNKNOWN), "tmem", b.get("num_columns", UNKNOWN),
                             b.get("alignment", 1), None, 1, b.get("offset"),
                             it.rng(call) if call is not None else None)

    @staticmethod
    def _allocation_attr(a: AllocationVal, name):
        table = {"name": a.name, "alignment": a.alignment, "dtype": a.dtype, "count": a.count,
                 "offset": a.offset}
        if a.space == "smem":
            table["size_bytes"] = a.size
        else:
            table["num_columns"] = a.size
        return table.get(name, UNKNOWN)

    # ================================================================== configs
    def _config_factory(self, name, args, kwargs, call):
        fn = getattr(self._PipelineConfig, name)
        bound = _signature_bind(fn, args, kwargs)
        if bound is None:
            self._unbound_call(f"PipelineConfig.{name}(...)", fn, args, kwargs, call)
            return UNKNOWN
        ptype, special = _FACTORIES[name]
        fields = {f: None for f in _CONFIG_FIELDS}
        fields.update({"num_bytes": 0, "producer_signaling_threads": E.SignalingThreads.All,
                       "consumer_signaling_threads": E.SignalingThreads.All, "advance_on_wait": False,
                       "advance_on_acquire": False, "mcast_mode_mn": (1, 1), "interleave_stride": 1})
        for k, v in bound.items():
            if k in fields:
                fields[k] = v
        for k, v in special.items():
            fields[k] = bound[v] if isinstance(v, str) else v
            if k in ("async_producer_op", "umma_consumer_producer_op"):
                fields.pop("producer_op", None)
        fields["pipeline_type"] = ptype
        return self._make_config(fields, call)

    def replace_config(self, cfg, changes: dict, call):
        """`dataclasses.replace(config, **changes)`: PipelineConfig is a dataclass, so this is
        its constructor called again with the config's fields and the changes (and checked
        again, as its __post_init__ does)."""
        fields = getattr(cfg, "fields", None)
        if fields is None or any(k not in _CONFIG_FIELDS for k in changes):
            return UNKNOWN          # no fields to copy, or a keyword Python rejects
        values = {k: v for k, v in fields.items() if k in _CONFIG_FIELDS}
        values.update(changes)
        return self._make_config(values, call)

    def _config_direct(self, it, args, kwargs, call):
        names = _CONFIG_FIELDS
        fields = {f.name: (f.default if f.default is not dataclasses.MISSING else UNKNOWN)
                  for f in dataclasses.fields(self._PipelineConfig)}
        fields.update(dict(zip(names, args)))
        fields.update({k: v for k, v in kwargs.items() if k in fields})
        return self._make_config(fields, call)

    def _make_config(self, fields, call):
        from ts_runtime.model.config_checks import check_pipeline_config
        it = self.it
        rng = self._r(call)
        pg, cg = fields.get("producer_group"), fields.get("consumer_group")

        def gsize(g):
            return _static(g.size) if isinstance(g, CoopGroupVal) else UNKNOWN

        def gagent(g):
            if isinstance(g, CoopGroupVal):
                return _name_of(g.agent)
            return UNKNOWN if g is UNKNOWN else None
        mcast = fields.get("mcast_mode_mn")
        p = PipelineModel(
            pipeline_type=fields.get("pipeline_type", UNKNOWN),
            num_stages=_static(fields.get("num_stages", UNKNOWN)),
            num_bytes=_static(fields.get("num_bytes", UNKNOWN)),
            producer_group_size=gsize(pg), consumer_group_size=gsize(cg),
            producer_agent=gagent(pg), consumer_agent=gagent(cg),
            cta_layout_vmnk=_layout(fields.get("cta_layout_vmnk")),
            producer_signaling_threads=fields.get("producer_signaling_threads"),
            consumer_signaling_threads=fields.get("consumer_signaling_threads"),
            consumer_wait_signaling_threads=fields.get("consumer_wait_signaling_threads"),
            umma_consumer_producer_op=_name_of(fields.get("umma_consumer_producer_op")) or "AsyncThread",
            async_producer_op=_name_of(fields.get("async_producer_op")) or "AsyncThread",
            advance_on_wait=fields.get("advance_on_wait", False),
            advance_on_acquire=fields.get("advance_on_acquire", False),
            num_bytes_per_warp_per_cta=_static(fields.get("num_bytes_per_warp_per_cta")),
            mcast_mode_mn=tuple(mcast) if isinstance(mcast, (tuple, list)) else mcast,
            interleave_strides=_strides(fields.get("interleave_stride", 1)),
            range=rng,
        )
        p.arg_ranges = self.call_arguments(call)
        try:
            from ts_runtime.model.config_checks import check_pipeline_config_at
            findings = list(check_pipeline_config_at(p))
        except ImportError:
            findings = [(c, e, m, rng) for c, e, m in check_pipeline_config(p)]
        for code, _exc, msg, at in findings[:1]:     # PipelineConfig raises the first one
            self.ctx.report(code, msg, at)
            return UNKNOWN
        self._explain_config(p, call)
        cfg = ConfigVal(p)
        cfg.fields = dict(fields)
        cfg.fields["interleave_strides"] = p.interleave_strides
        return cfg

    def _explain_config(self, p: PipelineModel, call):
        for attr, kw in (("num_stages", "num_stages"), ("num_bytes", "num_bytes"),
                         ("producer_group_size", "producer_group"),
                         ("consumer_group_size", "consumer_group"),
                         ("cta_layout_vmnk", "cta_layout_vmnk"),
                         ("interleave_strides", "interleave_stride")):
            if getattr(p, attr) is UNKNOWN:
                r = p.arg_ranges.get(kw, p.range)
                self.ctx.unknown(r, f"pipeline config `{kw}` could not be resolved statically; "
                                 "checks that need it are skipped")
