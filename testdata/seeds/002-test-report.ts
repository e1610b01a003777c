// The report object of seed 002 (LLM-as-Judge Template), verbatim: the shape of its
// test-report.json. `by_tag` maps each tag to `{ pass, total }` (seed: `tagResults.get(tag) || { pass: 0, total: 0 }`).
  const report = {
    summary: {
      total: totalCount,
      passed: passCount,
      failed: totalCount - passCount,
      pass_rate: passRate,
      average_score: avgScore
    },
    by_tag: Object.fromEntries(tagResults),
    detailed_results: results.map(r => ({
      id: r.example.id,
      tags: r.example.tags,
      input: r.example.input,
      expected: r.example.expected_output,
      actual: r.actual_output,
      scores: {
        overall: r.judge_result.overall_score,
        accuracy: r.judge_result.accuracy,
        completeness: r.judge_result.completeness,
        format_compliance: r.judge_result.format_compliance,
        scope_adherence: r.judge_result.scope_adherence,
        context_usage: r.judge_result.context_usage,
        mcp_usage: r.judge_result.mcp_usage_correct
      },
      pass: r.judge_result.pass,
      reasoning: r.judge_result.reasoning,
      suggestions: r.judge_result.improvement_suggestions
    }))
  };
