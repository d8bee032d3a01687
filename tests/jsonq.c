/* gpusim tests: print a value from a JSON document, for shell tests.
 *
 *   tests/jsonq FILE|- PATH      PATH like total_ms, kernels.0.bound, kernels.#
 *
 * Exits 1 if FILE is not valid JSON or PATH does not exist; "#" prints the
 * length of an array or object. */
#include "config.h"
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <stdlib.h>

int
main (int argc, char **argv)
{
  if (argc != 3)
    {
      fprintf (stderr, "usage: jsonq FILE|- PATH\n");
      return 2;
    }
  g_autoptr (JsonParser) p = json_parser_new ();
  GError *error = NULL;
  gboolean ok;
  if (g_strcmp0 (argv[1], "-") == 0)
    {
      GString *text = g_string_new (NULL);
      char buf[65536];
      size_t got;
      while ((got = fread (buf, 1, sizeof buf, stdin)) > 0)
        g_string_append_len (text, buf, (gssize) got);
      ok = json_parser_load_from_data (p, text->str, (gssize) text->len,
                                       &error);
      g_string_free (text, TRUE);
    }
  else
    ok = json_parser_load_from_file (p, argv[1], &error);
  if (!ok)
    {
      fprintf (stderr, "jsonq: %s\n", error->message);
      return 1;
    }
  JsonNode *n = json_parser_get_root (p);
  g_auto (GStrv) parts = g_strsplit (argv[2], ".", -1);
  for (char **q = parts; *q && **q; q++)
    {
      if (g_strcmp0 (*q, "#") == 0)
        {
          if (JSON_NODE_HOLDS_ARRAY (n))
            printf ("%u\n", json_array_get_length (json_node_get_array (n)));
          else if (JSON_NODE_HOLDS_OBJECT (n))
            printf ("%u\n", json_object_get_size (json_node_get_object (n)));
          else
            return 1;
          return 0;
        }
      if (JSON_NODE_HOLDS_ARRAY (n))
        {
          JsonArray *a = json_node_get_array (n);
          char *end;
          long i = strtol (*q, &end, 10);
          if (*end || i < 0 || (guint) i >= json_array_get_length (a))
            return 1;
          n = json_array_get_element (a, (guint) i);
        }
      else if (JSON_NODE_HOLDS_OBJECT (n))
        {
          JsonObject *o = json_node_get_object (n);
          if (!json_object_has_member (o, *q))
            return 1;
          n = json_object_get_member (o, *q);
        }
      else
        return 1;
    }
  if (JSON_NODE_HOLDS_VALUE (n))
    {
      GType t = json_node_get_value_type (n);
      if (t == G_TYPE_STRING)
        printf ("%s\n", json_node_get_string (n));
      else if (t == G_TYPE_DOUBLE)
        printf ("%.17g\n", json_node_get_double (n));
      else if (t == G_TYPE_INT64)
        printf ("%" G_GINT64_FORMAT "\n", json_node_get_int (n));
      else if (t == G_TYPE_BOOLEAN)
        printf ("%s\n", json_node_get_boolean (n) ? "true" : "false");
      return 0;
    }
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  json_generator_set_root (gen, n);
  g_autofree char *s = json_generator_to_data (gen, NULL);
  printf ("%s\n", s);
  return 0;
}
