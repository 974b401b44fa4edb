package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.multijoin.logical.MultiJoin

/** Plans [[MultiJoin]]; EnsureRequirements then adds one shuffle per input. */
object MultiJoinStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case MultiJoin(children, keys, joinType, keyColumns) =>
      MultiJoinExec(keys, joinType, children.map(planLater), keyColumns) :: Nil
    case _ => Nil
  }
}
