package org.apache.spark.sql.multijoin.execution

import org.apache.spark.sql.catalyst.plans.FullOuter
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}
import org.apache.spark.sql.multijoin.MultiJoinConf
import org.apache.spark.sql.multijoin.logical.MultiJoin

/** Plans [[MultiJoin]]; EnsureRequirements then adds one shuffle per input. */
object MultiJoinStrategy extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = plan match {
    case MultiJoin(children, keys, joinType) =>
      val reportsCoalescedKey = joinType == FullOuter && MultiJoinConf.fullOutputPartitioning
      MultiJoinExec(keys, joinType, children.map(planLater), reportsCoalescedKey) :: Nil
    case _ => Nil
  }
}
