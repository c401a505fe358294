// `srm-oracle --tables`: for each path, one JSON line with the table layout System.Reflection.Metadata computes: per
// present table (0x00-0x2C and the Portable PDB tables 0x30-0x37) its id, row count, row size and offset from the
// start of the metadata, and the heap sizes. The reader's own layout is compared with it on generated images.
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Text.Json;

static class Tables
{
    public static void Describe(Utf8JsonWriter json, string path)
    {
        json.WriteStartObject();
        json.WriteString("path", path);
        try
        {
            using var pe = new PEReader(File.OpenRead(path), PEStreamOptions.PrefetchEntireImage);
            var md = pe.GetMetadataReader();
            var rows = new List<(int Id, int Rows, int Size, int Offset)>();
            for (int id = 0; id <= 0x37; id++)
            {
                if (id is >= 0x2D and <= 0x2F) continue;
                var table = (TableIndex)id;
                int count = md.GetTableRowCount(table);
                if (count > 0) rows.Add((id, count, md.GetTableRowSize(table), md.GetTableMetadataOffset(table)));
            }
            json.WriteNull("error");
            json.WriteStartArray("tables");
            foreach (var (id, count, size, offset) in rows)
            {
                json.WriteStartObject();
                json.WriteNumber("id", id);
                json.WriteNumber("rows", count);
                json.WriteNumber("rowSize", size);
                json.WriteNumber("offset", offset);
                json.WriteEndObject();
            }
            json.WriteEndArray();
        }
        catch (Exception e)
        {
            json.WriteString("error", $"{e.GetType().Name}: {e.Message}");
        }
        json.WriteEndObject();
    }
}
