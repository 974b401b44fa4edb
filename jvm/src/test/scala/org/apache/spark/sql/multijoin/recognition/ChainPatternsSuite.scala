package org.apache.spark.sql.multijoin.recognition

import org.apache.spark.sql.catalyst.expressions.{Add, Alias, And, AttributeReference, CaseWhen, Cast, Coalesce, EqualTo, Expression, GreaterThan, IsNull, KnownFloatingPointNormalized, LessThan, Literal, Multiply, Rand, ScalarSubquery}
import org.apache.spark.sql.catalyst.optimizer.NormalizeNaNAndZero
import org.apache.spark.sql.catalyst.plans.Inner
import org.apache.spark.sql.catalyst.plans.logical.{Join, JoinHint, LocalRelation}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/** The key rules the FULL, LEFT and INNER chain recognisers share (ChainPatterns). */
class ChainPatternsSuite extends AnyFunSuite {
  import ChainPatterns._

  private val t1k = AttributeReference("k", IntegerType)()
  private val t1j = AttributeReference("j", IntegerType)()
  private val t2k = AttributeReference("k", IntegerType)()
  private val t2j = AttributeReference("j", IntegerType)()
  private val t3k = AttributeReference("k", IntegerType)()
  private val t1 = LocalRelation(t1k, t1j)
  private val t2 = LocalRelation(t2k, t2j)
  private val t3 = LocalRelation(t3k)

  private def join(condition: Option[Expression]): Join = Join(t1, t2, Inner, condition, JoinHint.NONE)

  test("strip removes aliases, float normalisation and exact widening casts, not other casts") {
    val d = AttributeReference("d", DoubleType)()
    assert(strip(Alias(Cast(t1k, LongType), "x")()) == t1k)
    assert(strip(KnownFloatingPointNormalized(NormalizeNaNAndZero(d))) == d)
    assert(strip(Cast(t1k, StringType)) == Cast(t1k, StringType))
    val bigint = AttributeReference("b", LongType)()
    assert(strip(Cast(bigint, DoubleType)) == Cast(bigint, DoubleType))
  }

  test("strip flattens nested coalesces and unwraps a coalesce of one operand") {
    assert(strip(Coalesce(Seq(Coalesce(Seq(t1k, t2k)), Cast(t3k, LongType)))) == Coalesce(Seq(t1k, t2k, t3k)))
    assert(strip(Coalesce(Seq(Cast(t1k, LongType)))) == t1k)
    assert(coalesceOperands(Coalesce(Seq(t1k, t2k))) == Seq(t1k, t2k))
    assert(coalesceOperands(t1k) == Seq(t1k))
  }

  test("takesKey: the key's operands in their order, or a leading part of them when not whole") {
    val key = Coalesce(Seq(t1k, t1j))
    assert(takesKey(Seq(t1k, t1j), key, wholeKey = true))
    assert(!takesKey(Seq(t1j, t1k), key, wholeKey = true)) // order within one input matters
    assert(takesKey(Seq(t1k), key, wholeKey = false))
    assert(!takesKey(Seq(t1k), key, wholeKey = true))
    assert(!takesKey(Seq(t1j), key, wholeKey = false)) // not a leading part
  }

  test("nullWhenAbsent: columns, coalesces of them and null-intolerant expressions of them") {
    assert(nullWhenAbsent(t1k))
    assert(nullWhenAbsent(Coalesce(Seq(t1k, t2k))))
    assert(nullWhenAbsent(Add(t1k, Literal(1))))
    assert(nullWhenAbsent(KnownFloatingPointNormalized(Cast(t1k, DoubleType))))
  }

  test("nullWhenAbsent: false for what has a value on the all-null row") {
    assert(!nullWhenAbsent(Literal(0)))
    assert(!nullWhenAbsent(Coalesce(Seq(t1k, Literal(0)))))
    assert(!nullWhenAbsent(CaseWhen(Seq((IsNull(t1k), Literal(0))), Some(t1k))))
    assert(!nullWhenAbsent(IsNull(t1k)))
  }

  test("notNullForMissingRow names the key a later level cannot coalesce") {
    assert(notNullForMissingRow(join(None), t1k).isEmpty)
    val reason = notNullForMissingRow(join(None), Coalesce(Seq(t1k, Literal(0))))
    assert(reason.exists(_.contains("not null for a row missing from its input")))
  }

  test("equalityPairs reads each conjunct as (left side, right side), whichever way it is written") {
    val condition = And(EqualTo(t1k, t2k), EqualTo(t2j, Add(t1j, Literal(1))))
    assert(equalityPairs(join(Some(condition))) == Right(Seq((t1k, t2k), (Add(t1j, Literal(1)), t2j))))
  }

  test("equalityPairs refuses no condition, a constant comparison and a non-equality, first one first") {
    assert(equalityPairs(join(None)).left.exists(_.contains("has no join condition")))
    assert(equalityPairs(join(Some(EqualTo(t1k, Literal(3))))).left.exists(_.contains("with a constant")))
    val inequality = And(EqualTo(t1k, t2k), GreaterThan(t1j, t2j))
    assert(equalityPairs(join(Some(inequality))).left.exists(_.contains("not an equality")))
    val twoProblems = And(LessThan(t1j, t2j), EqualTo(t1k, Literal(3)))
    assert(equalityPairs(join(Some(twoProblems))).left.exists(_.contains(LessThan(t1j, t2j).sql)))
  }

  test("keyProblem refuses a non-deterministic key and one that cannot be evaluated") {
    assert(keyProblem(join(None), Add(t1k, Literal(1))).isEmpty)
    assert(keyProblem(join(None), Add(Cast(Rand(Literal(1L)), IntegerType), t1k)).exists(_.contains("not deterministic")))
    assert(keyProblem(join(None), ScalarSubquery(t3)).exists(_.contains("cannot be evaluated")))
  }

  test("traverse stops at the first problem and checks nothing after it") {
    var checked = Vector.empty[Int]
    val result = traverse(Seq(1, 2, 3, 4)) { i =>
      checked :+= i
      if (i >= 2) Left(s"problem $i") else Right(i * 10)
    }
    assert(result == Left("problem 2"))
    assert(checked == Vector(1, 2))
    assert(traverse(Seq(1, 2))(i => Right(i * 10)) == Right(Seq(10, 20)))
    assert(firstProblem(Seq(None, Some("a"), Some("b"))) == Left("a"))
    assert(firstProblem(Seq(None)) == Right(()))
  }

  test("projectionAliases adds what a projection defines, over the inputs' columns") {
    val shifted = Alias(Add(t1k, Literal(1)), "shifted")()
    val again = Alias(Multiply(shifted.toAttribute, Literal(2)), "again")()
    val first = projectionAliases(Seq(t1k, shifted), Map.empty, nullWhenMissing = true)
    assert(first == Right(Map(shifted.exprId -> Add(t1k, Literal(1)))))
    val second = projectionAliases(Seq(again), first.toOption.get, nullWhenMissing = true)
    assert(second.map(_(again.exprId)) == Right(Multiply(Add(t1k, Literal(1)), Literal(2))))
  }

  test("projectionAliases refuses a non-deterministic alias, and one not null for a missing row where rows can be missing") {
    val random = Alias(Rand(Literal(1L)), "r")()
    assert(projectionAliases(Seq(random), Map.empty, nullWhenMissing = false).left.exists(_.contains("not deterministic")))
    val defaulted = Alias(Coalesce(Seq(t1k, Literal(0))), "d")()
    assert(projectionAliases(Seq(defaulted), Map.empty, nullWhenMissing = true).left.exists(_.contains("missing from its side")))
    assert(projectionAliases(Seq(defaulted), Map.empty, nullWhenMissing = false).isRight)
  }

  test("a chain's coalesce splits into each input's operands, through aliases; None for a shared or constant operand") {
    val level = Alias(Coalesce(Seq(t1k, t2k)), "level1")()
    val chain = Chain(Seq(t1, t2, t3), Seq(Seq(t1k), Seq(t2k), Seq(t3k)), Map(level.exprId -> level.child))
    assert(chain.arity == 1)
    assert(chain.operandsPerInput(Coalesce(Seq(level.toAttribute, t3k))) == Some(Seq(Seq(t1k), Seq(t2k), Seq(t3k))))
    assert(chain.operandsPerInput(Coalesce(Seq(t3k, t1k))) == Some(Seq(Seq(t1k), Seq(), Seq(t3k))))
    assert(chain.operandsPerInput(Coalesce(Seq(Add(t1k, t2k), t3k))).isEmpty)
    assert(chain.operandsPerInput(Coalesce(Seq(t1k, Literal(0)))).isEmpty)
  }
}
