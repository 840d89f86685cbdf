package dev.vigil.deploy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * What a PromQL expression refers to: its vector selectors (metric name and label matchers) and the
 * labels its aggregations and vector matching name ({@code by}, {@code without}, {@code on}, {@code
 * ignoring}, {@code group_left}, {@code group_right}), each with the selectors whose series must
 * carry that label. A recursive-descent reader of Prometheus' PromQL grammar: it finds names, it
 * does not evaluate, and it fails on what it cannot read instead of skipping it.
 */
public final class PromQl {
  /** {@code label op "value"} inside braces; {@code op} is one of =, !=, =~, !~. */
  public record Matcher(String label, String op, String value) {}

  /** A vector selector: a metric name (never empty here) and its matchers. */
  public record Selector(String metric, List<Matcher> matchers) {}

  /** A label named by a clause, and the selectors of the operand(s) the clause applies to. */
  public record LabelUse(String label, String clause, List<Selector> scope) {}

  /** Everything an expression refers to. */
  public record References(String expr, List<Selector> selectors, List<LabelUse> labels) {}

  private static final Set<String> AGGREGATIONS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "group",
          "stddev",
          "stdvar",
          "count",
          "count_values",
          "bottomk",
          "topk",
          "quantile",
          "limitk",
          "limit_ratio");
  private static final Set<String> WORD_OPERATORS = Set.of("and", "or", "unless", "atan2");
  private static final Set<String> SYMBOL_OPERATORS =
      Set.of("+", "-", "*", "/", "%", "^", "==", "!=", "<=", ">=", "<", ">");

  private final String expr;
  private final List<String> tokens;
  private int pos;
  private final List<Selector> selectors = new ArrayList<>();
  private final List<LabelUse> labels = new ArrayList<>();

  private PromQl(String expr) {
    this.expr = expr;
    this.tokens = tokenize(expr);
  }

  /** Reads {@code expr}; throws {@link IllegalArgumentException} naming what it could not read. */
  public static References parse(String expr) {
    PromQl reader = new PromQl(expr);
    reader.expression();
    if (reader.pos != reader.tokens.size()) {
      throw reader.error("unexpected " + reader.peek());
    }
    return new References(expr, List.copyOf(reader.selectors), List.copyOf(reader.labels));
  }

  // expression := unary (binaryOperator modifiers unary)*
  private void expression() {
    int first = selectors.size();
    unary();
    while (pos < tokens.size() && isBinaryOperator(peek())) {
      next();
      accept("bool"); // a comparison that returns 0 or 1 instead of filtering
      List<String> matching = new ArrayList<>();
      String clause = null;
      if (peekIs("on") || peekIs("ignoring")) {
        clause = next();
        matching.addAll(labelList());
        if (peekIs("group_left") || peekIs("group_right")) {
          String group = next();
          if (peekIs("(")) {
            for (String label : labelList()) {
              matching.add(label);
            }
          }
          clause = clause + " " + group;
        }
      }
      unary();
      if (clause != null) {
        List<Selector> both = List.copyOf(selectors.subList(first, selectors.size()));
        for (String label : matching) {
          labels.add(new LabelUse(label, clause, both));
        }
      }
    }
  }

  // unary := ('-' | '+')* postfix
  private void unary() {
    while (peekIs("-") || peekIs("+")) {
      next();
    }
    primary();
    // range, subquery, offset and @ modifiers
    while (pos < tokens.size()) {
      if (peekIs("[")) {
        next();
        duration();
        if (accept(":")) {
          if (!peekIs("]")) {
            duration();
          }
        }
        expect("]");
      } else if (peekIs("offset")) {
        next();
        accept("-");
        duration();
      } else if (peekIs("@")) {
        next();
        if (peekIs("start") || peekIs("end")) {
          next();
          expect("(");
          expect(")");
        } else {
          number();
        }
      } else {
        return;
      }
    }
  }

  private void primary() {
    String t = peek();
    if (t.equals("(")) {
      next();
      expression();
      expect(")");
    } else if (t.startsWith("\"") || t.startsWith("'") || t.startsWith("`")) {
      next();
    } else if (isNumber(t)) {
      next();
    } else if (t.equals("{")) {
      throw error("a selector without a metric name");
    } else if (isIdentifier(t)) {
      if (AGGREGATIONS.contains(t) && (peekAt(1, "(") || peekAt(1, "by") || peekAt(1, "without"))) {
        aggregation();
      } else if (peekAt(1, "(")) {
        next();
        arguments();
      } else {
        selector();
      }
    } else {
      throw error("unexpected " + t);
    }
  }

  // aggregation := op grouping? '(' args ')' grouping?
  private void aggregation() {
    String op = next();
    int first = selectors.size();
    List<String[]> grouping = new ArrayList<>();
    if (peekIs("by") || peekIs("without")) {
      String clause = next();
      for (String label : labelList()) {
        grouping.add(new String[] {clause, label});
      }
    }
    arguments();
    if (peekIs("by") || peekIs("without")) {
      String clause = next();
      for (String label : labelList()) {
        grouping.add(new String[] {clause, label});
      }
    }
    List<Selector> scope = List.copyOf(selectors.subList(first, selectors.size()));
    for (String[] g : grouping) {
      labels.add(new LabelUse(g[1], op + " " + g[0], scope));
    }
  }

  // '(' (expression (',' expression)*)? ')'
  private void arguments() {
    expect("(");
    if (!accept(")")) {
      expression();
      while (accept(",")) {
        expression();
      }
      expect(")");
    }
  }

  private void selector() {
    String metric = next();
    List<Matcher> matchers = new ArrayList<>();
    if (accept("{")) {
      while (!accept("}")) {
        String label = next();
        if (!isIdentifier(label)) {
          throw error("a label name, got " + label);
        }
        String op = next();
        if (!Set.of("=", "!=", "=~", "!~").contains(op)) {
          throw error("a matcher operator after " + label + ", got " + op);
        }
        matchers.add(new Matcher(label, op, unquote(next())));
        if (!peekIs("}")) {
          expect(",");
        }
      }
    }
    selectors.add(new Selector(metric, List.copyOf(matchers)));
  }

  private List<String> labelList() {
    expect("(");
    List<String> names = new ArrayList<>();
    while (!accept(")")) {
      String label = next();
      if (!isIdentifier(label)) {
        throw error("a label name, got " + label);
      }
      names.add(label);
      if (!peekIs(")")) {
        expect(",");
      }
    }
    return names;
  }

  private void duration() {
    String t = next();
    if (!t.matches("([0-9]+(ms|s|m|h|d|w|y))+|[0-9]+(\\.[0-9]+)?")) {
      throw error("a duration, got " + t);
    }
  }

  private void number() {
    String t = next();
    if (!isNumber(t)) {
      throw error("a number, got " + t);
    }
  }

  private static boolean isNumber(String t) {
    return Character.isDigit(t.charAt(0))
        || (t.charAt(0) == '.' && t.length() > 1)
        || t.equalsIgnoreCase("inf")
        || t.equalsIgnoreCase("nan");
  }

  private static boolean isIdentifier(String t) {
    return t.matches("[a-zA-Z_:][a-zA-Z0-9_:]*");
  }

  private boolean isBinaryOperator(String t) {
    return SYMBOL_OPERATORS.contains(t) || WORD_OPERATORS.contains(t);
  }

  private static String unquote(String t) {
    char q = t.charAt(0);
    if ((q != '"' && q != '\'' && q != '`') || t.length() < 2 || t.charAt(t.length() - 1) != q) {
      throw new IllegalArgumentException("a quoted string, got " + t);
    }
    String body = t.substring(1, t.length() - 1);
    return q == '`' ? body : body.replaceAll("\\\\(.)", "$1");
  }

  private String peek() {
    if (pos >= tokens.size()) {
      throw error("unexpected end");
    }
    return tokens.get(pos);
  }

  private boolean peekIs(String t) {
    return pos < tokens.size() && tokens.get(pos).equals(t);
  }

  private boolean peekAt(int ahead, String t) {
    return pos + ahead < tokens.size() && tokens.get(pos + ahead).equals(t);
  }

  private String next() {
    String t = peek();
    pos++;
    return t;
  }

  private boolean accept(String t) {
    if (peekIs(t)) {
      pos++;
      return true;
    }
    return false;
  }

  private void expect(String t) {
    if (!accept(t)) {
      throw error("expected " + t + (pos < tokens.size() ? ", got " + peek() : " at the end"));
    }
  }

  private IllegalArgumentException error(String what) {
    return new IllegalArgumentException(what + " (token " + pos + ") in PromQL: " + expr);
  }

  private static boolean isNameChar(char c) {
    return Character.isLetterOrDigit(c) || c == '_' || c == ':';
  }

  private static List<String> tokenize(String s) {
    List<String> out = new ArrayList<>();
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (Character.isWhitespace(c)) {
        i++;
      } else if (c == '#') { // a comment runs to the end of the line
        while (i < s.length() && s.charAt(i) != '\n') {
          i++;
        }
      } else if (c == '"' || c == '\'' || c == '`') {
        int j = i + 1;
        while (j < s.length() && s.charAt(j) != c) {
          j += s.charAt(j) == '\\' && c != '`' ? 2 : 1;
        }
        if (j >= s.length()) {
          throw new IllegalArgumentException("unterminated string in PromQL: " + s);
        }
        out.add(s.substring(i, j + 1));
        i = j + 1;
      } else if (c == ':' && i + 1 < s.length() && !isNameChar(s.charAt(i + 1))) {
        out.add(":"); // a subquery's [range:] without a step
        i++;
      } else if (c == ':' && (out.isEmpty() || out.get(out.size() - 1).matches("[0-9].*"))) {
        out.add(":"); // a subquery's [range:step]
        i++;
      } else if (Character.isLetterOrDigit(c) || c == '_' || c == ':' || c == '.') {
        int j = i;
        boolean number = Character.isDigit(c) || c == '.';
        while (j < s.length()) {
          char d = s.charAt(j);
          boolean part =
              Character.isLetterOrDigit(d)
                  || d == '_'
                  || (d == ':' && !number)
                  || (d == '.' && number);
          if (!part) {
            break;
          }
          j++;
        }
        out.add(s.substring(i, j));
        i = j;
      } else {
        String two = i + 1 < s.length() ? s.substring(i, i + 2) : "";
        if (Set.of("==", "!=", "<=", ">=", "=~", "!~").contains(two)) {
          out.add(two);
          i += 2;
        } else if ("(){}[],=<>+-*/%^@".indexOf(c) >= 0) {
          out.add(String.valueOf(c));
          i++;
        } else {
          throw new IllegalArgumentException("unexpected '" + c + "' in PromQL: " + s);
        }
      }
    }
    return out;
  }
}
