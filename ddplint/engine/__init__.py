"""The semantic model of one file: tree order, scopes, bindings, values and control flow.

`SemanticModel` is built by one sweep; `Resolver` answers what a name can hold and which
functions a call can run; `Flow` says what leaves a block and which conditions a node runs
under. Nothing here knows about torch: that is `ddplint.domain`.
"""

from ddplint.engine.flow import Condition, Flow
from ddplint.engine.model import Binding, Frame, ScopeNode, SemanticModel, storage_key
from ddplint.engine.resolve import MAX_DEPTH, Resolver, Value, argument, argument_for

__all__ = [
    "MAX_DEPTH",
    "Binding",
    "Condition",
    "Flow",
    "Frame",
    "Resolver",
    "ScopeNode",
    "SemanticModel",
    "Value",
    "argument",
    "argument_for",
    "storage_key",
]
