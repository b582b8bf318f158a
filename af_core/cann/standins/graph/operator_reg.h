/*
 * Stand-in for graph/operator_reg.h, which register/op_def.h includes but which belongs to the
 * graph-engine package, not to the metadef snapshot. op_def.h uses ge::Operator only by reference
 * (in the op-check function types), so a declaration of the class is all it needs: the same
 * declaration op_def.h itself makes when NO_OPERATOR_IMPL is defined. REG_OP and the rest of the
 * operator prototype API are deliberately absent: code that uses them fails the check.
 */
#ifndef AF_CANN_STANDIN_GRAPH_OPERATOR_REG_H
#define AF_CANN_STANDIN_GRAPH_OPERATOR_REG_H

namespace ge {
class Operator;
}  // namespace ge

#endif  // AF_CANN_STANDIN_GRAPH_OPERATOR_REG_H
